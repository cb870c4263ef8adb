import type { Logger } from 'pino';
import type { RelayConfig } from '../config/config-schema.js';
import { KafkaSink } from './kafka-sink.js';
import { kafkaSinkOptions } from './kafka-sink-options.js';
import { PlatformaticKafkaSink } from './platformatic-sink.js';
import type { Sink } from './sink.js';

/** The Kafka sink of --kafka-client (kafkajs by default), with the config's connection, TLS and SASL settings. */
export function createKafkaSink(config: RelayConfig, logger: Logger): Sink {
  const options = kafkaSinkOptions(config, logger);
  return config.kafkaClient === 'platformatic' ? new PlatformaticKafkaSink(options) : new KafkaSink(options);
}
