/** Kafka side of the benchmark: topics, end offsets, reading append times back. */
import { type Kafka, logLevel, type Admin, type KafkaMessage } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

export function benchKafka(brokers: string[], clientId = 'outbox-tail-bench'): Kafka {
  return createKafka({ brokers, clientId, logLevel: logLevel.NOTHING });
}

/**
 * A fresh topic whose record timestamps are the broker's append time
 * (message.timestamp.type=LogAppendTime): the moment a record became part of
 * the log, on the same clock as the writer's commit times.
 */
export async function createTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  await createTopicsAndWait(admin, [
    { topic, numPartitions: partitions, replicationFactor: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] },
  ]);
}

/** Records in the topic: the sum of its partitions' high watermarks (fresh topics start at 0). */
export async function recordCount(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((n, p) => n + Number(p.high), 0);
}

/**
 * How a record in Kafka is tied to the outbox row it carries: by the `id`
 * header (outbox-tail, Debezium's EventRouter), or, for a relay that writes no
 * headers (Conduit), by the payload's orderId, the number the bench's writer
 * gave the row (PAYLOAD_SQL's g).
 */
export type RecordIdentity = 'id-header' | 'payload-order-id';

/** The payload's orderId, or undefined when the value is not the bench's payload JSON. */
function payloadOrderId(value: Buffer | null): number | undefined {
  try {
    const id = (JSON.parse(value?.toString() ?? '') as { orderId?: unknown }).orderId;
    return typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the topic from the beginning (read_committed) until `count` records
 * arrived: outbox id -> append time (ms), and -> visible time (ms):
 * when a read_committed consumer may first see it. Without Kafka transactions
 * that is its append time; inside one it is the append time of the commit
 * marker that follows it in its partition. The outbox id is the `id` header,
 * or, given `idOfOrder`, the id the writer gave the payload's orderId.
 */
export async function readAppendTimes(
  kafka: Kafka,
  topic: string,
  count: number,
  timeoutMs = 120_000,
  idOfOrder?: (orderId: number) => string | undefined,
): Promise<{ times: Map<string, number>; visible: Map<string, number>; records: number; commitMarkers: number }> {
  const times = new Map<string, number>();
  const visible = new Map<string, number>();
  // Per partition: ids seen in a Kafka transaction whose commit marker has not been read yet.
  const pending = new Map<number, string[]>();
  let transactional = false;
  const unresolved = () => [...pending.values()].reduce((n, ids) => n + ids.length, 0);
  const { records, commitMarkers } = await consumeTopic(
    kafka,
    topic,
    count,
    {
      message: (m, partition) => {
        const orderId = idOfOrder ? payloadOrderId(m.value) : undefined;
        const id = idOfOrder ? (orderId !== undefined ? idOfOrder(orderId) : undefined) : m.headers?.id?.toString();
        if (!id) return;
        if (!times.has(id)) times.set(id, Number(m.timestamp));
        const waiting = pending.get(partition) ?? [];
        pending.set(partition, waiting);
        waiting.push(id);
      },
      commitMarker: (partition, timestamp) => {
        transactional = true;
        const waiting = pending.get(partition) ?? [];
        for (const id of waiting) visible.set(id, timestamp);
        waiting.length = 0;
      },
      settled: () => !transactional || unresolved() === 0,
    },
    timeoutMs,
  );
  // No Kafka transactions: a record is visible when appended.
  if (!transactional) for (const [id, t] of times) visible.set(id, t);
  return { times, visible, records, commitMarkers };
}

export interface TopicHandlers {
  message: (message: KafkaMessage, partition: number) => void;
  /** A transaction's commit marker (control record), in offset order with the messages. */
  commitMarker?: (partition: number, timestampMs: number) => void;
  /** Reading may end once `count` records arrived and this holds (default: at once). */
  settled?: () => boolean;
}

/** Hands every record of the topic, from the beginning, in offset order, to the handlers until `count` arrived. */
export async function consumeTopic(
  kafka: Kafka,
  topic: string,
  count: number,
  handlers: TopicHandlers | ((message: KafkaMessage, partition: number) => void),
  timeoutMs = 120_000,
): Promise<{ records: number; commitMarkers: number }> {
  const h: TopicHandlers = typeof handlers === 'function' ? { message: handlers } : handlers;
  const consumer = kafka.consumer({
    groupId: `bench-reader-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    maxWaitTimeInMs: 100,
    maxBytes: 50 * 1024 * 1024,
  });
  let records = 0;
  let commitMarkers = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reading ${topic}: ${records} of ${count} records within ${timeoutMs} ms`)), timeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            // messagesWithinOffset (kafkajs internal) still holds the control records, in offset order.
            const raw = (batch as unknown as { messagesWithinOffset?: Array<{ offset: string; isControlRecord?: boolean; timestamp: string }> })
              .messagesWithinOffset;
            const shown = new Map(batch.messages.map((m) => [m.offset, m]));
            for (const r of raw ?? batch.messages) {
              if ((r as { isControlRecord?: boolean }).isControlRecord) {
                commitMarkers++;
                h.commitMarker?.(batch.partition, Number(r.timestamp));
                continue;
              }
              const m = shown.get(r.offset);
              if (!m) continue; // a record of an aborted transaction: kafkajs hides it from read_committed
              records++;
              h.message(m, batch.partition);
            }
            if (records >= count && (h.settled?.() ?? true)) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(error);
        });
    });
  } finally {
    await consumer.disconnect();
  }
  return { records, commitMarkers };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
