/**
 * The crash test with the produce chain pipelined (5 requests in flight, small
 * batches so several requests are in flight), on kafkajs (our pipelined
 * producer: the default path) and on @platformatic/kafka: kill -9 again and
 * again, then recount loss, phantoms and per-key order. Its negative control is
 * a chain that writes a request behind later ones (what a client does that
 * resends a refused request with fresh sequence numbers): the same order check
 * must catch it.
 */
import { describe, expect, it } from 'vitest';
import { getStack } from '../support/stack.js';
import { formatResult, runCrash, type CrashOptions } from './crash-harness.js';

const stack = getStack();
const run = (options: Omit<CrashOptions, 'stack' | 'log'>) =>
  runCrash({ stack, log: (line) => console.log(line), ...options }).then((result) => {
    console.log(formatResult(result));
    return result;
  });

const PIPELINED = { OUTBOX_TAIL_KAFKA_CLIENT: 'kafkajs', OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS: '5', OUTBOX_TAIL_BATCH_MAX_MESSAGES: '2' };
const CLIENTS = ['kafkajs', 'platformatic'] as const;

describe('crash test, pipelined produce chain (5 requests in flight)', () => {
  it.each(CLIENTS)('%s: loses nothing, sends nothing rolled back, and keeps per-key order across relay and consumer kills', async (client) => {
    const r = await run({ orders: 300, kills: 5, consumerKills: 2, seed: 42, cancelEvery: 2, relayEnv: { ...PIPELINED, OUTBOX_TAIL_KAFKA_CLIENT: client } });
    expect(r.relay_kills).toBe(5);
    expect({ lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({ lost: 0, phantoms: 0, order_violations: 0 });
    expect([r.outbox, r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders, r.orders]);
    expect(r.passed).toBe(true);
  });

  it('negative control: a chain that writes a request behind later ones breaks per-key order, and the recount says so', async () => {
    const r = await run({
      orders: 300,
      kills: 2,
      consumerKills: 0,
      seed: 5,
      cancelEvery: 1,
      consumerMode: 'none',
      relayVariant: 'pipeline-resend-behind',
      relayEnv: PIPELINED,
    });
    expect(r.order_violations).toBeGreaterThan(0);
    expect(r.passed).toBe(false);
  });
});
