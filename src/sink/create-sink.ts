import type { Logger } from 'pino';
import type { RelayConfig } from '../config/config-schema.js';
import { OutboxTailError } from '../errors/outbox-tail-error.js';
import { KafkaSink } from './kafka-sink.js';
import { kafkaSinkOptions } from './kafka-sink-options.js';
import { PlatformaticKafkaSink } from './platformatic-sink.js';
import type { Sink } from './sink.js';
import { TransactionalKafkaSink } from './transactional-kafka-sink.js';
import { WorkerSink } from './worker-sink.js';

/** The Kafka sink of --kafka-client (kafkajs by default), --delivery and --sink-thread, with the config's connection, TLS and SASL settings. */
export function createKafkaSink(config: RelayConfig, logger: Logger): Sink {
  const options = kafkaSinkOptions(config, logger);
  if (config.delivery === 'exactly-once') {
    if (!config.slot || !config.transactionalId)
      throw new OutboxTailError('CONFIG_INVALID', 'exactly-once delivery needs --slot (the transactional id and the watermark key derive from it)');
    if (config.sinkThread === 'worker') return WorkerSink.transactional(config, new KafkaSink(options), logger);
    return new TransactionalKafkaSink({
      ...options,
      slot: config.slot,
      transactionalId: config.transactionalId,
      offsetsTopic: config.offsetsTopic,
      transactionTimeoutMs: config.transactionTimeoutMs,
      lanes: config.transactionLanes,
    });
  }
  const sink = config.kafkaClient === 'platformatic' ? new PlatformaticKafkaSink(options) : new KafkaSink(options);
  // This thread's sink still answers metadata(); the worker builds its own from the same config.
  return config.sinkThread === 'worker' ? new WorkerSink(config, sink, logger) : sink;
}
