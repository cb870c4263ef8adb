import { describe, expect, it } from 'vitest';
import { getStack } from '../support/stack.js';
import { formatResult, runCrash, type CrashOptions } from './crash-harness.js';

const stack = getStack();
const run = (options: Omit<CrashOptions, 'stack' | 'log' | 'delivery'>) =>
  runCrash({ stack, log: (line) => console.log(line), delivery: 'exactly-once', ...options }).then((result) => {
    console.log(formatResult(result));
    return result;
  });

// Status updates far apart: after a kill PostgreSQL replays everything since the session's start (where the
// watermark was confirmed), so the skip rule decides about many transactions at every restart.
const NO_PERIODIC_CONFIRM = { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' };

describe('exactly-once crash test: kill -9 again and again, then recount what a read_committed consumer sees', () => {
  it('puts every outbox row in Kafka exactly once (no duplicate, no loss) across relay and consumer kills', async () => {
    const r = await run({ orders: 400, kills: 8, consumerKills: 2, seed: 42, relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.relay_kills).toBe(8);
    expect({ duplicates: r.duplicates, lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({
      duplicates: 0,
      lost: 0,
      phantoms: 0,
      order_violations: 0,
    });
    expect(r.kafka_records).toBe(r.outbox + r.cancelled.outbox);
    expect([r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders]);
    expect(r.relay_fatal_codes).toEqual([]);
    expect(r.passed).toBe(true);
  });
});

describe('exactly-once crash test with --source messages (outbox_tail.emit() and writeOutboxEvent via message)', () => {
  it('puts every event in Kafka exactly once (no duplicate, no loss, nothing rolled back) across relay and consumer kills', async () => {
    const r = await run({ orders: 400, kills: 8, consumerKills: 2, seed: 42, source: 'messages', relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.relay_kills).toBe(8);
    expect({ duplicates: r.duplicates, lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({
      duplicates: 0,
      lost: 0,
      phantoms: 0,
      order_violations: 0,
    });
    expect(r.rolled_back_savepoints).toBeGreaterThan(0);
    expect(r.kafka_records).toBe(r.outbox + r.cancelled.outbox);
    expect([r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders]);
    expect(r.relay_fatal_codes).toEqual([]);
    expect(r.passed).toBe(true);
  });
});

describe('exactly-once negative controls: the recount catches each broken design, every run', () => {
  it('(1) a relay that writes the watermark after the Kafka commit, not inside it, publishes duplicates', async () => {
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 23,
      consumerMode: 'none',
      relayVariant: 'watermark-after-commit',
      relayEnv: NO_PERIODIC_CONFIRM,
    });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.lost).toBe(0);
  });

  it('(2) a skip rule off by one (end LSN < watermark instead of <=) publishes the last transaction again', async () => {
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 29,
      consumerMode: 'none',
      relayVariant: 'skip-rule-off-by-one',
      relayEnv: NO_PERIODIC_CONFIRM,
    });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.lost).toBe(0);
  });

  it('(2b) a skip rule off by one the other way (also skipping the first transaction after the watermark) loses it', async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 0, seed: 37, consumerMode: 'none', relayVariant: 'skip-rule-one-too-many' });
    // Every restart with a watermark and a write after it skips one transaction: about one lost row per kill.
    expect(r.lost).toBeGreaterThan(0);
    expect(r.duplicates).toBe(0);
  });

  it('(3) a relay that confirms PostgreSQL before the Kafka commit loses what the kill aborted', async () => {
    // The first kill waits for a first Kafka commit, so a watermark exists before any kill: on a loaded machine the
    // broken relay could otherwise be killed before it ever committed, losing rows with no watermark to refuse on.
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 31,
      consumerMode: 'none',
      relayVariant: 'confirm-before-commit',
      firstKillAfterRecords: 1,
    });
    expect(r.lost).toBeGreaterThan(0);
    // The next relay sees the slot confirmed past the watermark and refuses to start rather than hide it.
    expect(r.relay_fatal_codes).toContain('WATERMARK_BEHIND_SLOT');
  });
});
