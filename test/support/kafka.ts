/** Kafka helpers for tests: clients and a collector that reads a topic back. */
import { type Kafka, logLevel, type IHeaders, type KafkaConfig } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { uniqueName } from './database.js';

export function kafkaFor(stack: { brokers: string[] }, clientId = 'outbox-tail-test', extra: Partial<KafkaConfig> = {}): Kafka {
  return createKafka({ clientId, brokers: stack.brokers, logLevel: logLevel.ERROR, ...extra });
}

export interface CollectedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map((x) => x.toString()).join(',') : v.toString();
  }
  return out;
}

/**
 * Reads `topic` from the beginning with a fresh consumer group until `count`
 * messages arrived (or `timeoutMs` passed: then it throws, saying how many came).
 */
export async function readTopic(stack: { brokers: string[] }, topic: string, count: number, timeoutMs = 60_000): Promise<CollectedMessage[]> {
  // Silent: right after a broker (re)start kafkajs logs retriable errors
  // ("coordinator is loading") at ERROR level; a real failure throws below.
  const consumer = kafkaFor(stack, 'outbox-tail-test-reader', { logLevel: logLevel.NOTHING }).consumer({
    groupId: uniqueName('reader'),
    retry: { retries: 10 },
  });
  const messages: CollectedMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`readTopic(${topic}): ${messages.length} of ${count} messages within ${timeoutMs} ms`)), timeoutMs);
      consumer
        .run({
          eachMessage: async ({ topic: t, partition, message }) => {
            messages.push({
              topic: t,
              partition,
              offset: message.offset,
              key: message.key?.toString() ?? null,
              value: message.value?.toString() ?? null,
              headers: headersToStrings(message.headers),
            });
            if (messages.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch((err: unknown) => {
          clearTimeout(timer);
          reject(err);
        });
    });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}
