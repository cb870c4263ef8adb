import { Kafka, type KafkaConfig } from 'kafkajs';
import { installAbortedFilterFix } from './kafkajs-aborted-filter-fix.js';
import { installKafkajsCodecs } from './kafkajs-codecs.js';
import { installRequestQueueFix } from './kafkajs-request-queue-fix.js';

/** Every kafkajs client of outbox-tail (sinks, consumer, commands) comes from here, with kafkajs's timer and read_committed filter fixed and every codec installed first. */
export function createKafka(config: KafkaConfig): Kafka {
  installRequestQueueFix();
  installAbortedFilterFix();
  installKafkajsCodecs();
  return new Kafka(config);
}
