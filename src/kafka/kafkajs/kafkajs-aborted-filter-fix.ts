import { createRequire } from 'node:module';

const BROKER_MODULE = 'kafkajs/src/broker/index.js';
/** An abort marker's key: control record version 0, type 0 (abort). */
const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

interface AbortedTransaction {
  producerId: string;
  firstOffset: string;
}

interface FetchedMessage {
  offset: string;
  key?: Buffer | null;
  isControlRecord?: boolean;
  batchContext?: { producerId?: string; inTransaction?: boolean };
}

interface FetchedPartition {
  abortedTransactions?: AbortedTransaction[] | null;
  messages?: FetchedMessage[];
}

interface FetchResponse {
  responses?: Array<{ partitions?: FetchedPartition[] }>;
}

type Fetch = (this: unknown, request: { isolationLevel?: number }) => Promise<FetchResponse>;

interface BrokerPrototype {
  fetch: Fetch;
  __outboxTailAbortedFilter?: Fetch;
}

/**
 * Marks the records of aborted Kafka transactions in one partition's fetch
 * response, the way Kafka's Java consumer decides it: every aborted
 * transaction whose first offset is at or before a record makes its producer
 * aborted (in first-offset order, however many at once), the producer's abort
 * marker ends it, and a transactional record of an aborted producer is dropped.
 * Returns how many records it marked.
 */
export function markAbortedRecords(partition: FetchedPartition): number {
  const aborted = partition.abortedTransactions;
  const messages = partition.messages;
  if (!aborted || aborted.length === 0 || !messages) return 0;
  const pending = [...aborted].sort((a, b) => (BigInt(a.firstOffset) < BigInt(b.firstOffset) ? -1 : BigInt(a.firstOffset) > BigInt(b.firstOffset) ? 1 : 0));
  const abortedProducers = new Set<string>();
  let next = 0;
  let marked = 0;
  for (const message of messages) {
    const offset = BigInt(message.offset);
    while (next < pending.length && BigInt(pending[next]!.firstOffset) <= offset) abortedProducers.add(String(pending[next++]!.producerId));
    const producerId = String(message.batchContext?.producerId);
    if (message.isControlRecord) {
      if (message.key && ABORT_MARKER_KEY.equals(message.key)) abortedProducers.delete(producerId);
    } else if (message.batchContext?.inTransaction && abortedProducers.has(producerId)) {
      // kafkajs drops control records from what it hands out but still counts their offsets, as for an aborted record.
      message.isControlRecord = true;
      marked++;
    }
  }
  // Decided here: kafkajs' own filter has nothing left to do.
  partition.abortedTransactions = [];
  return marked;
}

/**
 * kafkajs 2.2.4 filters read_committed fetches (consumer/filterAbortedMessages.js)
 * by taking at most one aborted transaction per record from the broker's list,
 * in the list's order. When a fetch starts past the first offsets of two
 * aborted transactions (two producers, as our transaction lanes are, and a
 * consumer resuming from a committed offset after a broker restart), the second
 * producer's records at the start pass as committed; when the broker lists a
 * later-starting transaction first, the earlier one's records pass too.
 * Seen once as a read_committed duplicate in the exactly-once fault suite, and
 * the watermark reader could read an aborted watermark. This marks aborted
 * records in every read_committed fetch response before kafkajs builds its
 * batches. kafkajs has had no release since 2023. Returns false (and changes
 * nothing) where kafkajs's internals moved.
 */
export function installAbortedFilterFix(): boolean {
  try {
    const Broker = createRequire(import.meta.url)(BROKER_MODULE) as { prototype: BrokerPrototype };
    const proto = Broker.prototype;
    if (proto.__outboxTailAbortedFilter) return true;
    if (typeof proto.fetch !== 'function') return false;
    const original = proto.fetch;
    proto.__outboxTailAbortedFilter = original;
    proto.fetch = async function fetch(this: unknown, request) {
      const response = await original.call(this, request);
      // kafkajs' fetch is read_committed unless the consumer asked for read_uncommitted (0).
      if (request.isolationLevel !== 0)
        for (const topic of response.responses ?? []) for (const partition of topic.partitions ?? []) markAbortedRecords(partition);
      return response;
    };
    return true;
  } catch {
    return false;
  }
}
