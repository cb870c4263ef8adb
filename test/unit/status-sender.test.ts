import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/replication/lsn.js';
import { StatusSender } from '../../src/replication/status-sender.js';

function bed(options: { replicationTimeoutMs?: number } = {}) {
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
  const counters = { transactionsConfirmed: 0, confirmedLsn: Lsn.of(0n), lastConfirmAt: 0 };
  const dead: string[] = [];
  const sender = new StatusSender({
    channel,
    frontier,
    counters,
    statusIntervalMs: 1000,
    replicationTimeoutMs: options.replicationTimeoutMs ?? 0,
    slot: 's',
    logger: pino({ level: 'silent' }),
    onDead: (error) => dead.push(`${error.code} ${error.message}`),
  });
  return { sender, channel, frontier, counters, sentStatus, dead };
}

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
    expect(b.dead).toEqual(['PG_UNREACHABLE replication slot s: PostgreSQL sent nothing for 60 s on the replication connection; presuming it dead and reconnecting']);
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
});
