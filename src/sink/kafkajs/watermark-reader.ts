import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { classifyKafkaError } from '../../kafka/kafkajs/kafka-errors.js';
import { withKafkaAdmin } from '../../kafka/kafkajs/with-kafka-admin.js';
import { decodeWatermark, type Watermark } from '../watermark.js';
import { checkOffsetsTopic } from './offsets-topic.js';

/** Reading the offsets topic to its last stable offset; a slow broker ends the session, which retries. */
const WATERMARK_READ_TIMEOUT_MS = 30_000;

export interface WatermarkReaderOptions {
  offsetsTopic: string;
  slot: string;
  transactionalId: string;
  logger: Logger;
}

/**
 * Exactly-once: the slot's last committed watermark in the offsets topic
 * (read_committed, to the topic's last stable offset), after checking the
 * topic and that no other slot publishes under this transactional id.
 */
export async function readWatermark(kafka: Kafka, options: WatermarkReaderOptions): Promise<Watermark | null> {
  const { offsetsTopic: topic, slot, transactionalId } = options;
  const ends = await withKafkaAdmin(kafka, `reading the end of the offsets topic ${topic}`, async (admin) => {
    await checkOffsetsTopic(admin, topic);
    // kafkajs' admin lists offsets read_uncommitted (it sends no isolation level): the high watermark. connect() fenced
    // every lane first, so no transaction of ours is open there and read_committed reaches it.
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high)]));
  });
  const latest = ends.size === 0 ? new Map<string, Watermark>() : await readCompacted(kafka, topic, slot, ends);
  for (const w of latest.values()) {
    if (w.transactionalId === transactionalId && w.slot !== slot) {
      throw new OutboxTailError(
        'TRANSACTIONAL_ID_CONFLICT',
        `exactly-once delivery: transactional id ${transactionalId} already publishes for slot ${w.slot} (relay ${w.relayId}); two slots on one transactional id would fence each other`,
        {
          hint: `give each slot its own --transactional-id (the default outbox-tail-<slot> is unique per slot)`,
        },
      );
    }
  }
  const own = latest.get(slot) ?? null;
  if (own && own.transactionalId !== transactionalId) {
    options.logger.warn(
      { event: 'transactional-id-changed', previous: own.transactionalId, transactionalId },
      'the slot was published under another transactional id: a relay still running with it is not fenced',
    );
  }
  return own;
}

/** Every key's last committed value, read with read_committed up to the offsets fetched before. */
async function readCompacted(kafka: Kafka, topic: string, slot: string, ends: Map<number, bigint>): Promise<Map<string, Watermark>> {
  const groupId = `outbox-tail-watermark-${slot}-${process.pid}-${Date.now()}`;
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
  const latest = new Map<string, Watermark>();
  const pending = new Set(ends.keys());
  let done!: () => void;
  const reached = new Promise<void>((resolve) => (done = resolve));
  const progress = (partition: number, lastOffset: string) => {
    if (BigInt(lastOffset) + 1n >= ends.get(partition)!) pending.delete(partition);
    if (pending.size === 0) done();
  };
  // Control records (commit and abort markers) reach no handler; kafkajs reports the batches they end as processed.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => progress(payload.partition, payload.lastOffset));
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const key = message.key?.toString();
        if (key !== undefined) {
          if (message.value === null) latest.delete(key);
          else latest.set(key, decodeWatermark(message.value, `${topic} partition ${partition} offset ${message.offset}`));
        }
        progress(partition, message.offset);
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new OutboxTailError('KAFKA_ERROR', `reading the offsets topic ${topic}: its end was not reached within ${WATERMARK_READ_TIMEOUT_MS / 1000} s`, {
              retriable: true,
            }),
          ),
        WATERMARK_READ_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([reached, timeout]);
    } finally {
      clearTimeout(timer);
    }
    return latest;
  } catch (error) {
    throw classifyKafkaError(error, `reading the watermark from ${topic}`);
  } finally {
    await consumer.disconnect().catch(() => undefined);
    // The throwaway group is removed; failing to is harmless (it expires).
    await withKafkaAdmin(kafka, null, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
  }
}
