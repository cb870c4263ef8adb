import { Kafka, type KafkaConfig } from 'kafkajs';
import { installRequestQueueFix } from './kafkajs-request-queue-fix.js';

/** Every kafkajs client of outbox-tail (sinks, consumer, commands) comes from here, with kafkajs's timer fixed first. */
export function createKafka(config: KafkaConfig): Kafka {
  installRequestQueueFix();
  return new Kafka(config);
}
