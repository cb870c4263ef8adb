/**
 * Exactly-once mode under the faults (issue 13): the six scenarios that make
 * sense there, each run in full, recounted read_committed with no duplicate
 * allowed; the exactly-once negative control; and zombie fencing (rule E6).
 * A fault stack of this file's own.
 */
import { describe, expect, it } from 'vitest';
import { scenario } from './scenarios.js';
import { zombieFencing } from './zombie-fencing.js';
import { log, report, useFaultStack } from './fault-suite.js';

const stack = useFaultStack('exactly-once');
const EXACTLY_ONCE_SCENARIOS = ['kafka-kill', 'postgres-restart', 'relay-sigstop', 'network-cut', 'standby-takeover', 'big-transaction'];

describe('fault scenarios in exactly-once mode: a read_committed consumer sees every row once (lost = 0, duplicates = 0)', () => {
  for (const name of EXACTLY_ONCE_SCENARIOS) {
    it(`exactly-once ${name}: ${scenario(name).title.split(':')[0]}, no duplicate read_committed`, async () => {
      const r = report(await scenario(name).run({ fs: stack.fs, log, delivery: 'exactly-once' }));
      console.log(`exactly-once ${name}: read_uncommitted ${JSON.stringify(r.read_uncommitted)}`);
      expect(r.failed, r.detail).toEqual([]);
      expect({ passed: r.passed, lost: r.lost, duplicates: r.duplicates, phantoms: r.phantoms }).toEqual({ passed: true, lost: 0, duplicates: 0, phantoms: 0 });
      // The relay killed in the middle of the 100,000-row transaction left it open; the next one aborted it.
      if (name === 'big-transaction') expect((r.read_uncommitted as { aborted: number }).aborted).toBeGreaterThan(0);
    }, 600_000);
  }
});

describe('exactly-once negative control: the exactly-once recount catches a broken relay', () => {
  it('standby-takeover in exactly-once mode catches a skip rule off by one (the transaction at the watermark published again)', async () => {
    // No periodic confirm: the new relay replays from far behind the watermark, so the skip rule decides.
    const r = report(
      await scenario('standby-takeover').run({
        fs: stack.fs,
        log,
        delivery: 'exactly-once',
        variant: 'skip-rule-off-by-one',
        quick: true,
        relayEnv: { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' },
      }),
    );
    expect(r.passed).toBe(false);
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.failed.some((f) => f.startsWith('exactly-once: no duplicate read_committed'))).toBe(true);
    expect(r.lost).toBe(0);
  }, 300_000);
});

describe('exactly-once: a zombie relay woken after a takeover is fenced by Kafka (rule E6)', () => {
  it('a relay paused past wal_sender_timeout inside a Kafka transaction cannot commit it after the standby took over: no duplicate, no loss', async () => {
    const r = await zombieFencing({ fs: stack.fs, log, variant: 'slow-commit' });
    expect({ released: r.walsender_released, tookOver: r.b_took_over }).toEqual({ released: true, tookOver: true });
    expect(r.zombie_commit).toMatch(/^failed KAFKA_PRODUCER_FENCED/);
    expect(r.zombie_watermarks_after_takeover).toBe(0);
    expect({ duplicates: r.duplicates, lost: r.lost, phantoms: r.phantoms }).toEqual({ duplicates: 0, lost: 0, phantoms: 0 });
    // One replay at the takeover at most (B starts from the slot, skipping what the watermark covers).
    expect(r.lsn_drops).toBeLessThanOrEqual(1);
  }, 300_000);

  it('negative control: the same zombie with a transactional id of its own (no fencing) commits after the takeover, caught as duplicates', async () => {
    const r = await zombieFencing({ fs: stack.fs, log, variant: 'slow-commit-unfenced' });
    expect({ released: r.walsender_released, tookOver: r.b_took_over }).toEqual({ released: true, tookOver: true });
    expect(r.zombie_commit).toBe('ok');
    expect(r.zombie_watermarks_after_takeover).toBeGreaterThan(0);
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.lost).toBe(0);
  }, 300_000);
});
