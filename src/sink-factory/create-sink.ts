import type { Logger } from 'pino';
import type { RelayConfig } from '../config/config-schema.js';
import { OutboxTailError } from '../errors/outbox-tail-error.js';
import { KafkaSink } from '../kafka-clients/kafkajs/kafka-sink.js';
import { kafkaSinkOptions } from '../kafka-clients/kafka-client-options.js';
import { PlatformaticKafkaSink } from '../kafka-clients/platformatic/platformatic-sink.js';
import type { Sink } from '../sink/sink.js';
import { WorkerSink, type SinkThreadStart } from '../sink-thread/worker-sink.js';
import { TransactionalKafkaSink } from '../transactional-session/transactional-kafka-sink.js';

/** Makes the sink of one replication session: after any Kafka failure the producer is recreated. */
export type SinkFactory = (config: RelayConfig, logger: Logger) => Sink;

/**
 * The sink thread's entry module: the compiled .js in dist, or the .ts source
 * under tsx (worker-sink.ts starts that one through tsx's API).
 */
const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './sink-thread-entry.ts' : './sink-thread-entry.js', import.meta.url);

/** The worker thread of --sink-thread worker, which builds its own sink from the same config. */
export function sinkThread(config: RelayConfig): SinkThreadStart {
  return { entry: ENTRY, workerData: { config } };
}

/** The Kafka sink of --kafka-client (kafkajs by default), --delivery and --sink-thread, with the config's connection, TLS and SASL settings. */
export function createKafkaSink(config: RelayConfig, logger: Logger): Sink {
  const options = kafkaSinkOptions(config, logger);
  if (config.delivery === 'exactly-once') {
    if (!config.slot || !config.transactionalId)
      throw new OutboxTailError('CONFIG_INVALID', 'exactly-once delivery needs --slot (the transactional id and the watermark key derive from it)');
    if (config.sinkThread === 'worker') return WorkerSink.transactional(sinkThread(config), new KafkaSink(options), logger);
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
  return config.sinkThread === 'worker' ? new WorkerSink(sinkThread(config), sink, logger) : sink;
}
