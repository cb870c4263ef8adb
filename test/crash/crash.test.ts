import { describe, expect, it } from 'vitest';
import { crashRunner, NO_PERIODIC_CONFIRM } from './crash-runner.js';

// The crash test (outbox table): the relay and the consumer killed again and again while orders are written.
// Its negative controls are in crash-controls.test.ts, the table-less source in crash-messages.test.ts: three
// files, so that they run side by side.
const run = crashRunner();

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
