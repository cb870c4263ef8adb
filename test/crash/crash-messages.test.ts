import { describe, expect, it } from 'vitest';
import { crashRunner, NO_PERIODIC_CONFIRM } from './crash-runner.js';

// The crash test on the table-less source (--source messages), with its negative control.
const run = crashRunner();

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
