import type { Logger } from 'pino';
import type { RelayConfig } from '../config/config-schema.js';
import { kafkaSecurity, type KafkaSecurity } from './kafka-security.js';

/** What every Kafka sink is built from, whichever client library it uses. */
export interface KafkaSinkOptions extends KafkaSecurity {
  brokers: string[];
  clientId: string;
  retries: number;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  allowAutoTopicCreation: boolean;
  logger: Logger;
}

/** Sink options from the config (connection, retries, TLS, SASL). */
export function kafkaSinkOptions(config: RelayConfig, logger: Logger): KafkaSinkOptions {
  return {
    brokers: config.brokers,
    clientId: config.clientId,
    retries: config.kafkaRetries,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    allowAutoTopicCreation: config.allowAutoTopicCreation,
    logger,
    ...kafkaSecurity(config),
  };
}
