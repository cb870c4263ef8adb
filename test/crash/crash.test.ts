import { describe, expect, it } from 'vitest';
import { getStack } from '../support/stack.js';
import { formatResult, runCrash, type CrashOptions } from './crash-harness.js';

const stack = getStack();
const run = (options: Omit<CrashOptions, 'stack' | 'log'>) =>
  runCrash({ stack, log: (line) => console.log(line), ...options }).then((result) => {
    console.log(formatResult(result));
    return result;
  });

// Status updates far apart: every kill replays all that was published since the
// last confirm, so duplicates are certain, not a lucky race.
const NO_PERIODIC_CONFIRM = { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' };

describe('crash test: kill -9 again and again, then recount', () => {
  it('loses nothing, sends nothing rolled back, and applies every order once across relay and consumer kills', async () => {
    const r = await run({ orders: 400, kills: 6, consumerKills: 3, seed: 42 });
    expect(r.relay_kills).toBe(6);
    expect(r.consumer_kills).toBe(3);
    expect({ lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({ lost: 0, phantoms: 0, order_violations: 0 });
    expect([r.outbox, r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders, r.orders]);
    expect(r.rolled_back_transactions).toBeGreaterThan(0);
    expect(r.passed).toBe(true);
  });

  it('absorbs real duplicates: replays after kills put ids in Kafka twice, effects still happen once', async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 2, seed: 7, relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.shipments).toBe(r.orders);
    expect(r.lost).toBe(0);
    expect(r.passed).toBe(true);
  });

  it('checks rows = outbox rows per write path (created and cancelled)', async () => {
    const r = await run({ orders: 150, kills: 5, consumerKills: 1, seed: 3, cancelEvery: 2 });
    expect(r.outbox).toBe(r.orders);
    expect(r.cancelled.orders).toBe(75);
    expect(r.cancelled.outbox).toBe(r.cancelled.orders);
    expect(r.cancelled.distinct_ids).toBe(r.cancelled.orders);
    expect(r.cancelled.processed).toBe(r.cancelled.orders);
    expect(r.cancelled.shipments).toBe(r.cancelled.orders);
  });
});

describe('negative controls: the recount catches each broken design, every run', () => {
  it("(1) the article's naive writer (commit, then send), killed right after a commit, loses events", async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 0, seed: 11, writerMode: 'naive', consumerMode: 'none' });
    // Each kill lands right after a COMMIT, inside the writer's 20 ms before its send; a slow machine can let
    // a send slip out before the kill, so the claim is "loses at least one", not one per kill.
    expect(r.relay_kills).toBe(5);
    expect(r.lost).toBeGreaterThan(0);
    expect(r.lost).toBeLessThanOrEqual(r.relay_kills);
    expect(r.passed).toBe(false);
  });

  it('(2) a relay that confirms on receipt loses what it had not published when killed', async () => {
    // Records wait 2 s to be batched: every kill (0.3-0.7 s apart) lands while some are received but unpublished.
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 13,
      consumerMode: 'none',
      relayVariant: 'confirm-on-receipt',
      relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' },
    });
    expect(r.lost).toBeGreaterThan(0);
    expect(r.passed).toBe(false);
  });

  it('(2, control) the correct relay under the same conditions loses nothing', async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 0, seed: 13, consumerMode: 'none', relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' } });
    expect(r.lost).toBe(0);
    expect(r.distinct_ids).toBe(r.orders);
  });

  it('(4) a consumer without the processed-messages table ships orders twice', async () => {
    const r = await run({ orders: 150, kills: 4, consumerKills: 1, seed: 19, consumerMode: 'naive', relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.shipments).toBeGreaterThan(r.orders);
    expect(r.passed).toBe(false);
  });
});

describe('crash test with --source messages: events written as logical decoding messages (outbox_tail.emit() and writeOutboxEvent via message)', () => {
  it('loses nothing and sends nothing rolled back (transactions and savepoints) across relay and consumer kills', async () => {
    const r = await run({ orders: 400, kills: 6, consumerKills: 3, seed: 42, source: 'messages' });
    expect(r.source).toBe('messages');
    expect(r.relay_kills).toBe(6);
    expect({ lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({ lost: 0, phantoms: 0, order_violations: 0 });
    expect([r.outbox, r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders, r.orders]);
    expect(r.rolled_back_transactions).toBeGreaterThan(0);
    expect(r.rolled_back_savepoints).toBeGreaterThan(0);
    expect(r.cancelled.distinct_ids).toBe(r.cancelled.orders);
    expect(r.passed).toBe(true);
  });

  it('absorbs real duplicates: replays after kills put ids in Kafka twice, effects still happen once', async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 2, seed: 7, source: 'messages', relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.shipments).toBe(r.orders);
    expect(r.lost).toBe(0);
    expect(r.passed).toBe(true);
  });

  it('(2) catches a relay that confirms on receipt (it loses events), and the correct relay under the same conditions loses none', async () => {
    const conditions = {
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 13,
      consumerMode: 'none',
      source: 'messages',
      relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' },
    } as const;
    const broken = await run({ ...conditions, relayVariant: 'confirm-on-receipt' });
    expect(broken.lost).toBeGreaterThan(0);
    expect(broken.passed).toBe(false);
    const correct = await run(conditions);
    expect(correct.lost).toBe(0);
    expect(correct.distinct_ids).toBe(correct.orders);
  });
});
