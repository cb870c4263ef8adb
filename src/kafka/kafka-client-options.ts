import type { Logger } from 'pino';
import type { Compression } from './compression-codecs.js';
import { kafkaSecurity, type KafkaSecurity, type KafkaSecuritySettings } from './kafka-security.js';

/** What every Kafka sink is built from, whichever client library it uses. */
export interface KafkaSinkOptions extends KafkaSecurity {
  brokers: string[];
  clientId: string;
  retries: number;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  allowAutoTopicCreation: boolean;
  /** Produce requests in flight per broker connection (--max-in-flight-requests); 1 when absent. */
  maxInFlightRequests?: number;
  /** --compression of every record batch the sink writes (records, dead letters, watermarks); none when absent. */
  compression?: Compression;
  logger: Logger;
}

/** The Kafka connection as the options name it: brokers, client id, retries, timeouts, TLS and SASL. */
export interface KafkaConnectionSettings extends KafkaSecuritySettings {
  brokers: string[];
  clientId: string;
  kafkaRetries: number;
  connectTimeoutMs: number;
  kafkaRequestTimeoutMs: number;
  allowAutoTopicCreation: boolean;
  maxInFlightRequests?: number;
  compression?: Compression;
}

/** Client options from the connection settings (connection, retries, TLS, SASL). */
export function kafkaSinkOptions(config: KafkaConnectionSettings, logger: Logger): KafkaSinkOptions {
  return {
    brokers: config.brokers,
    clientId: config.clientId,
    retries: config.kafkaRetries,
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    allowAutoTopicCreation: config.allowAutoTopicCreation,
    ...(config.maxInFlightRequests !== undefined ? { maxInFlightRequests: config.maxInFlightRequests } : {}),
    ...(config.compression !== undefined ? { compression: config.compression } : {}),
    logger,
    ...kafkaSecurity(config),
  };
}
