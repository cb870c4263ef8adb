import { commandKafka, withKafkaAdmin } from '../../kafka/kafkajs/with-kafka-admin.js';
import type { KafkaConnectionSettings } from '../../kafka/kafka-client-options.js';
import { createOffsetsTopic } from '../../sink/kafkajs/offsets-topic.js';

/** `outbox-tail init --delivery exactly-once`: the compacted offsets topic, created if missing (and checked if present). */
export function initOffsetsTopic(config: KafkaConnectionSettings & { offsetsTopic: string }): Promise<{ topic: string; created: boolean }> {
  const kafka = commandKafka(config, { name: 'init', retries: 2 });
  return withKafkaAdmin(kafka, `creating the offsets topic ${config.offsetsTopic}`, async (admin) => ({
    topic: config.offsetsTopic,
    created: await createOffsetsTopic(admin, config.offsetsTopic),
  }));
}
