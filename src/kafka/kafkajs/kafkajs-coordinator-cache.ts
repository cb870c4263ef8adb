import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 asks the cluster for the transaction coordinator (a
 * FindCoordinator request) before every AddPartitionsToTxn and every EndTxn:
 * two of the five round trips of a Kafka transaction, one after the other
 * (measured at a steady 5,000/s: 1,005 FindCoordinator requests for 500
 * Kafka transactions, 1.7 ms each). The Java client keeps the coordinator
 * until a request to it fails; this does the same for kafkajs, whose last
 * release is from 2023, by wrapping Cluster#findGroupCoordinator for the
 * transaction coordinator type only.
 *
 * A cached coordinator is dropped as soon as any request to it rejects
 * (NOT_COORDINATOR, a closed connection, anything), so kafkajs's own retry
 * looks it up afresh; a relay session that fails makes new producers, and so
 * new clusters with empty caches.
 */

interface BrokerLike {
  [method: string]: unknown;
}
interface ClusterPrototype {
  findGroupCoordinator(this: object, args: { groupId: string; coordinatorType?: number }): Promise<BrokerLike>;
  __outboxTailCoordinatorCache?: true;
}

/** kafkajs's COORDINATOR_TYPES.TRANSACTION (src/protocol/coordinatorTypes.js). */
export const TRANSACTION_COORDINATOR = 1;

/** A view of the broker that forgets the cache entry when any of its requests rejects. */
function forgettingBroker(broker: BrokerLike, forget: () => void): BrokerLike {
  return new Proxy(broker, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) result.catch(forget);
        return result;
      };
    },
  });
}

type FindGroupCoordinator = ClusterPrototype['findGroupCoordinator'];

/** Cluster#findGroupCoordinator with a transaction coordinator cache per cluster and transactional id. */
export function withCoordinatorCache(original: FindGroupCoordinator): FindGroupCoordinator {
  const caches = new WeakMap<object, Map<string, Promise<BrokerLike>>>();
  return function (this: object, args) {
    if (args.coordinatorType !== TRANSACTION_COORDINATOR) return original.call(this, args);
    let cache = caches.get(this);
    if (!cache) caches.set(this, (cache = new Map()));
    const hit = cache.get(args.groupId);
    if (hit) return hit;
    const forget = () => {
      if (cache.get(args.groupId) === found) cache.delete(args.groupId);
    };
    const found: Promise<BrokerLike> = original.call(this, args).then((broker) => forgettingBroker(broker, forget));
    found.catch(forget);
    cache.set(args.groupId, found);
    return found;
  };
}

/** Installs the cache once per process (kafkajs's Cluster class is one module instance). */
export function cacheTransactionCoordinator(): void {
  const require = createRequire(import.meta.url);
  const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: ClusterPrototype };
  const proto = Cluster.prototype;
  if (proto.__outboxTailCoordinatorCache || typeof proto.findGroupCoordinator !== 'function') return;
  proto.findGroupCoordinator = withCoordinatorCache(proto.findGroupCoordinator);
  proto.__outboxTailCoordinatorCache = true;
}
