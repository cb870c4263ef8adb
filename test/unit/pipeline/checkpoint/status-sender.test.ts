import type { Logger } from 'pino';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { StatusSender, type ConfirmCounters } from '../../../../src/pipeline/checkpoint/status-sender.js';
import { captureLogs } from '../../../support/log-capture.js';

function bed(options: { replicationTimeoutMs?: number; logger?: Logger; counters?: ConfirmCounters } = {}) {
  const sentStatus: Array<{ lsn: bigint; reply: boolean }> = [];
  const channel = {
    confirmedLsn: Lsn.of(0n),
    lastStatusAt: Date.now(),
    silentForMs: 0,
    sendStatus(lsn: Lsn, reply = false) {
      sentStatus.push({ lsn, reply });
      if (lsn > this.confirmedLsn) this.confirmedLsn = lsn;
      this.lastStatusAt = Date.now();
    },
    async flushStatus(lsn: Lsn) {
      this.sendStatus(lsn, true);
      return true;
    },
  };
  const frontier = { safeLsn: Lsn.of(0n), completed: 0 };
  const counters = options.counters ?? { transactionsConfirmed: 0, confirmedLsn: Lsn.of(0n), lastConfirmAt: 0 };
  const dead: string[] = [];
  const deadErrors: OutboxTailError[] = [];
  const sender = new StatusSender({
    channel,
    frontier,
    counters,
    statusIntervalMs: 1000,
    replicationTimeoutMs: options.replicationTimeoutMs ?? 0,
    slot: 's',
    logger: options.logger ?? pino({ level: 'silent' }),
    onDead: (error) => {
      deadErrors.push(error);
      dead.push(`${error.code} ${error.message}`);
    },
  });
  return { sender, channel, frontier, counters, sentStatus, dead, deadErrors };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('StatusSender', () => {
  it('sends the safe LSN when it moved, and records the confirm across sessions', () => {
    const b = bed();
    b.sender.tick();
    expect(b.sentStatus).toEqual([]); // nothing new, and the server heard from us just now
    b.frontier.safeLsn = Lsn.of(150n);
    b.frontier.completed = 2;
    b.sender.tick();
    expect(b.sentStatus).toEqual([{ lsn: 150n, reply: false }]);
    expect(b.counters).toMatchObject({ transactionsConfirmed: 2, confirmedLsn: 150n });
    expect(b.counters.lastConfirmAt).toBeGreaterThan(0);
    b.frontier.completed = 3;
    b.sender.tick(); // LSN unchanged: no update, the count waits for the next one
    expect(b.sentStatus).toHaveLength(1);
    expect(b.counters.transactionsConfirmed).toBe(2);
  });

  it('sends at least every 10 s even when nothing moved (wal_sender_timeout)', () => {
    const b = bed();
    b.channel.lastStatusAt = Date.now() - 10_000;
    b.sender.tick();
    expect(b.sentStatus).toEqual([{ lsn: 0n, reply: false }]);
  });

  it('asks for a keepalive at half the replication timeout and gives a silent connection up at the timeout', () => {
    const b = bed({ replicationTimeoutMs: 60_000 });
    b.channel.silentForMs = 30_000;
    b.sender.tick();
    expect(b.sentStatus).toEqual([{ lsn: 0n, reply: true }]);
    b.channel.silentForMs = 60_000;
    b.sender.tick();
    expect(b.dead).toEqual([
      'PG_UNREACHABLE replication slot s: PostgreSQL sent nothing for 60 s on the replication connection; presuming it dead and reconnecting',
    ]);
    b.channel.silentForMs = 0;
    b.frontier.safeLsn = Lsn.of(10n);
    b.sender.tick(); // stopped: a dead connection gets nothing more
    expect(b.sentStatus).toHaveLength(1);
  });

  it('answers a keepalive with the safe LSN, and flush() confirms and says whether the server replied', async () => {
    const b = bed();
    b.frontier.safeLsn = Lsn.of(42n);
    b.sender.reply();
    expect(b.sentStatus).toEqual([{ lsn: 42n, reply: false }]);
    expect(await b.sender.flush()).toEqual({ lsn: 42n, serverReplied: true });
    expect(b.counters.confirmedLsn).toBe(42n);
  });

  it('sends on the status interval once started, with one timer however often start() is called, and none after stop()', () => {
    vi.useFakeTimers();
    const b = bed();
    b.sender.start();
    b.sender.start();
    expect(vi.getTimerCount()).toBe(1);
    b.frontier.safeLsn = Lsn.of(5n);
    vi.advanceTimersByTime(999);
    expect(b.sentStatus).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(b.sentStatus).toEqual([{ lsn: 5n, reply: false }]);
    b.sender.stop();
    expect(vi.getTimerCount()).toBe(0);
    b.sender.start(); // a stopped sender stays stopped: its session is over
    expect(vi.getTimerCount()).toBe(0);
    b.frontier.safeLsn = Lsn.of(6n);
    vi.advanceTimersByTime(20_000);
    expect(b.sentStatus).toHaveLength(1);
  });

  it('gives a silent connection up as a retriable PG_UNREACHABLE that says what to check', () => {
    const b = bed({ replicationTimeoutMs: 60_000 });
    b.channel.silentForMs = 61_400;
    b.sender.tick();
    expect(b.deadErrors).toHaveLength(1);
    expect(b.deadErrors[0]).toMatchObject({
      code: 'PG_UNREACHABLE',
      retriable: true,
      hint: 'check the network path to PostgreSQL; --replication-timeout-ms sets how long a silent connection is trusted',
    });
    expect(b.deadErrors[0]!.message).toContain('sent nothing for 61 s');
  });

  it('asks for a keepalive only once half the replication timeout has passed in silence', () => {
    const b = bed({ replicationTimeoutMs: 60_000 });
    b.channel.silentForMs = 29_999;
    b.frontier.safeLsn = Lsn.of(7n);
    b.sender.tick();
    expect(b.sentStatus).toEqual([{ lsn: 7n, reply: false }]);
  });

  it('counts each confirmed transaction once, and adds every session to the counters that run across sessions', () => {
    const first = bed();
    first.frontier.safeLsn = Lsn.of(150n);
    first.frontier.completed = 2;
    first.sender.tick();
    first.frontier.safeLsn = Lsn.of(200n);
    first.frontier.completed = 5;
    first.sender.tick();
    expect(first.counters.transactionsConfirmed).toBe(5);
    // the next session's frontier counts from zero again
    const second = bed({ counters: first.counters });
    second.frontier.safeLsn = Lsn.of(300n);
    second.frontier.completed = 1;
    second.sender.tick();
    expect(second.counters).toMatchObject({ transactionsConfirmed: 6, confirmedLsn: 300n });
  });

  it('records and logs a confirm only when the confirmed LSN moved, not when the same LSN is sent again', () => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
    const { lines, logger } = captureLogs('debug');
    const b = bed({ logger });
    b.frontier.safeLsn = Lsn.of(0x96n);
    b.sender.tick();
    expect(b.counters).toMatchObject({ confirmedLsn: 0x96n, lastConfirmAt: 1_000_000 });
    expect(lines.map(({ level, event, lsn, msg }) => ({ level, event, lsn, msg }))).toEqual([
      { level: 'debug', event: 'confirm', lsn: '0/96', msg: 'confirmed' },
    ]);
    vi.advanceTimersByTime(10_000);
    b.sender.tick(); // 10 s of silence: the same LSN again, for wal_sender_timeout
    expect(b.sentStatus).toEqual([
      { lsn: 0x96n, reply: false },
      { lsn: 0x96n, reply: false },
    ]);
    expect(b.counters.lastConfirmAt).toBe(1_000_000);
    expect(lines).toHaveLength(1);
  });
});
