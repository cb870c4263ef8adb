import { logLevel } from 'kafkajs';
import { createKafka } from '../../kafka/kafkajs/create-kafka.js';
import type { Logger } from 'pino';
import { classifyKafkaError } from '../../kafka/kafkajs/kafka-errors.js';
import { connectionConfig } from '../../sink/kafkajs/kafka-sink.js';
import { kafkaSinkOptions, type KafkaConnectionSettings } from '../../kafka/kafka-client-options.js';
import { createOffsetsTopic } from '../../sink/kafkajs/offsets-topic.js';

/** `outbox-tail init --delivery exactly-once`: the compacted offsets topic, created if missing (and checked if present). */
export async function initOffsetsTopic(
  config: KafkaConnectionSettings & { offsetsTopic: string },
  logger: Logger,
): Promise<{ topic: string; created: boolean }> {
  const kafka = createKafka({
    ...connectionConfig(kafkaSinkOptions(config, logger)),
    clientId: `${config.clientId}-init`,
    logLevel: logLevel.NOTHING,
    retry: { retries: 2 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    return { topic: config.offsetsTopic, created: await createOffsetsTopic(admin, config.offsetsTopic) };
  } catch (error) {
    throw classifyKafkaError(error, `creating the offsets topic ${config.offsetsTopic}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
