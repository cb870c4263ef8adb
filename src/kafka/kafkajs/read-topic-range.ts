import type { Kafka, KafkaMessage } from 'kafkajs';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { classifyKafkaError } from './kafka-errors.js';
import { withKafkaAdmin } from './with-kafka-admin.js';

/** One partition's offsets to read: from `start` (inclusive) to `end` (exclusive, an end fetched before reading). */
export interface PartitionRange {
  topic: string;
  partition: number;
  start: bigint;
  end: bigint;
}

export interface ReadTopicRangeOptions {
  /** Group id prefix: the group only carries the fetches (nothing is committed) and is deleted afterwards. */
  groupPrefix: string;
  /** Fails when no batch arrived for this long while partitions were still short of their end. */
  stallTimeoutMs: number;
}

/**
 * Reads the given offset ranges once, read_committed, handing each batch's
 * messages within the range to `onBatch` and awaiting it (that is the
 * backpressure: kafkajs fetches the next batch after). Resolves when every
 * partition reached its end. kafkajs consumes through a group only, so a
 * throwaway group is used, nothing is committed, and it is deleted after.
 */
export async function readTopicRange(
  kafka: Kafka,
  ranges: readonly PartitionRange[],
  onBatch: (topic: string, partition: number, messages: readonly KafkaMessage[]) => Promise<void>,
  options: ReadTopicRangeOptions,
): Promise<void> {
  const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  const pending = new Map(ranges.filter((r) => r.end > r.start).map((r) => [key(r.topic, r.partition), r]));
  if (pending.size === 0) return;
  const bounds = new Map(ranges.map((r) => [key(r.topic, r.partition), r]));
  const topics = [...new Set([...pending.values()].map((r) => r.topic))];
  const groupId = `${options.groupPrefix}-${process.pid}-${Date.now()}`;
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
  let done!: () => void;
  let lastProgress = Date.now();
  const reached = new Promise<void>((resolve) => (done = resolve));
  const progress = (topic: string, partition: number, lastOffset: string) => {
    lastProgress = Date.now();
    const range = pending.get(key(topic, partition));
    if (range && BigInt(lastOffset) + 1n >= range.end) pending.delete(key(topic, partition));
    if (pending.size === 0) done();
  };
  // Batches that end in control records (transaction markers) hand no message over; kafkajs still reports them.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => progress(payload.topic, payload.partition, payload.lastOffset));
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        const range = bounds.get(key(batch.topic, batch.partition));
        if (!range) return;
        // A fetch may start before the seek below takes effect: the range, not the fetch, decides what counts.
        const inRange = batch.messages.filter((m) => {
          const offset = BigInt(m.offset);
          return offset >= range.start && offset < range.end;
        });
        if (inRange.length > 0) await onBatch(batch.topic, batch.partition, inRange);
      },
    });
    for (const r of pending.values()) consumer.seek({ topic: r.topic, partition: r.partition, offset: r.start.toString() });
    const stalled = new Promise<never>((_, reject) => {
      timer = setInterval(() => {
        if (Date.now() - lastProgress < options.stallTimeoutMs) return;
        const short = [...pending.values()].map((r) => `${r.topic}[${r.partition}]`).join(', ');
        reject(
          new OutboxTailError(
            'KAFKA_ERROR',
            `reading ${short}: no records arrived for ${options.stallTimeoutMs / 1000} s before the end offsets fetched at start`,
            {
              retriable: true,
              hint: 'check the brokers and the partitions named; run the command again',
            },
          ),
        );
      }, 1_000);
    });
    await Promise.race([reached, stalled]);
  } catch (error) {
    throw classifyKafkaError(error, `reading ${topics.join(', ')}`);
  } finally {
    clearInterval(timer);
    await consumer.disconnect().catch(() => undefined);
    // The throwaway group is removed; failing to is harmless (it expires).
    await withKafkaAdmin(kafka, null, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
  }
}
