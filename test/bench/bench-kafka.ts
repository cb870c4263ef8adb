/** Kafka side of the benchmark: topics, end offsets, reading append times back. */
import { Kafka, logLevel, type Admin, type KafkaMessage } from 'kafkajs';

export function benchKafka(brokers: string[], clientId = 'outbox-tail-bench'): Kafka {
  return new Kafka({ brokers, clientId, logLevel: logLevel.NOTHING });
}

/**
 * A fresh topic whose record timestamps are the broker's append time
 * (message.timestamp.type=LogAppendTime): the moment a record became part of
 * the log, on the same clock as the writer's commit times.
 */
export async function createTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] }],
    waitForLeaders: true,
  });
}

/** Records in the topic: the sum of its partitions' high watermarks (fresh topics start at 0). */
export async function recordCount(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((n, p) => n + Number(p.high), 0);
}

/** Reads the topic from the beginning until `count` records arrived: outbox id (header) -> append time (ms). */
export async function readAppendTimes(
  kafka: Kafka,
  topic: string,
  count: number,
  timeoutMs = 120_000,
): Promise<{ times: Map<string, number>; records: number }> {
  const times = new Map<string, number>();
  const records = await consumeTopic(
    kafka,
    topic,
    count,
    (m) => {
      const id = m.headers?.id?.toString();
      if (id && !times.has(id)) times.set(id, Number(m.timestamp));
    },
    timeoutMs,
  );
  return { times, records };
}

/** Hands every record of the topic, from the beginning, to `each` until `count` arrived; returns how many did. */
export async function consumeTopic(
  kafka: Kafka,
  topic: string,
  count: number,
  each: (message: KafkaMessage, partition: number) => void,
  timeoutMs = 120_000,
): Promise<number> {
  const consumer = kafka.consumer({
    groupId: `bench-reader-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    maxWaitTimeInMs: 100,
    maxBytes: 50 * 1024 * 1024,
  });
  let records = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reading ${topic}: ${records} of ${count} records within ${timeoutMs} ms`)), timeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              records++;
              each(m, batch.partition);
            }
            if (records >= count) {
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
  return records;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
