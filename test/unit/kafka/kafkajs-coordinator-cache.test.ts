import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { TRANSACTION_COORDINATOR, withCoordinatorCache } from '../../../src/kafka/kafkajs/kafkajs-coordinator-cache.js';
import { laneTransactionalId } from '../../../src/sink/kafkajs/transactional-kafka-sink.js';

/** A stand-in for kafkajs's Cluster#findGroupCoordinator that counts lookups and hands out brokers whose requests can be made to fail. */
function fakeCluster() {
  const lookups: string[] = [];
  let failNext = false;
  const original = async function (this: object, args: { groupId: string; coordinatorType?: number }) {
    lookups.push(`${args.coordinatorType ?? 0}:${args.groupId}`);
    return {
      nodeId: lookups.length,
      endTxn: async () => {
        if (failNext) {
          failNext = false;
          throw Object.assign(new Error('This is not the correct coordinator'), { type: 'NOT_COORDINATOR' });
        }
        return 'ok';
      },
    };
  };
  return { lookups, original, failOnce: () => (failNext = true) };
}

describe('kafkajs transaction coordinator cache', () => {
  it('looks the transaction coordinator up once per cluster and transactional id', async () => {
    const fake = fakeCluster();
    const find = withCoordinatorCache(fake.original);
    const a = {};
    const b = {};
    const first = await find.call(a, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR });
    const again = await find.call(a, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR });
    await find.call(a, { groupId: 'tx.2', coordinatorType: TRANSACTION_COORDINATOR });
    await find.call(b, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR });
    expect(again.nodeId).toBe(first.nodeId);
    expect(fake.lookups).toEqual(['1:tx', '1:tx.2', '1:tx']);
  });

  it('leaves consumer group coordinators alone', async () => {
    const fake = fakeCluster();
    const find = withCoordinatorCache(fake.original);
    const cluster = {};
    await find.call(cluster, { groupId: 'g' });
    await find.call(cluster, { groupId: 'g', coordinatorType: 0 });
    expect(fake.lookups).toEqual(['0:g', '0:g']);
  });

  it('forgets a coordinator whose request failed, so the retry looks it up again', async () => {
    const fake = fakeCluster();
    const find = withCoordinatorCache(fake.original);
    const cluster = {};
    const broker = await find.call(cluster, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR });
    fake.failOnce();
    await expect((broker.endTxn as () => Promise<string>)()).rejects.toThrow(/not the correct coordinator/);
    // The rejection reached the caller unchanged, and the next lookup asks the cluster again.
    const next = await find.call(cluster, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR });
    expect(next.nodeId).not.toBe(broker.nodeId);
    await expect((next.endTxn as () => Promise<string>)()).resolves.toBe('ok');
    expect(fake.lookups).toEqual(['1:tx', '1:tx']);
  });

  it('forgets a lookup that failed', async () => {
    let calls = 0;
    const find = withCoordinatorCache(async function () {
      calls++;
      if (calls === 1) throw new Error('GROUP_COORDINATOR_NOT_AVAILABLE');
      return { nodeId: calls };
    });
    const cluster = {};
    await expect(find.call(cluster, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR })).rejects.toThrow();
    await expect(find.call(cluster, { groupId: 'tx', coordinatorType: TRANSACTION_COORDINATOR })).resolves.toMatchObject({ nodeId: 2 });
  });

  it('kafkajs still has the internals the cache wraps (Cluster#findGroupCoordinator, TRANSACTION = 1)', () => {
    const require = createRequire(import.meta.url);
    const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: Record<string, unknown> };
    const types = require('kafkajs/src/protocol/coordinatorTypes.js') as { TRANSACTION: number };
    expect(typeof Cluster.prototype.findGroupCoordinator).toBe('function');
    expect(types.TRANSACTION).toBe(TRANSACTION_COORDINATOR);
  });
});

describe('exactly-once lanes', () => {
  it('lane 0 keeps the configured transactional id; the others append .<n>', () => {
    expect([0, 1, 2, 3].map((i) => laneTransactionalId('outbox-tail-orders', i))).toEqual([
      'outbox-tail-orders',
      'outbox-tail-orders.2',
      'outbox-tail-orders.3',
      'outbox-tail-orders.4',
    ]);
  });
});
