import type { Logger } from 'pino';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { KafkaSink } from './kafkajs/kafka-sink.js';
import { kafkaSinkOptions, type KafkaConnectionSettings } from '../kafka/kafka-client-options.js';
import { PlatformaticKafkaSink } from './platformatic/platformatic-sink.js';
import type { Sink } from './sink.js';
import { WorkerSink, type SinkThreadStart } from './thread/worker-sink.js';
import { TransactionalKafkaSink } from './kafkajs/transactional-kafka-sink.js';

/**
 * What a sink is built from, named as the options name them: the client
 * (--kafka-client), the thread (--sink-thread), the delivery and its
 * transactional settings, and the connection. Plain data: the sink thread is
 * built from the same object.
 */
export interface SinkSettings extends KafkaConnectionSettings {
  kafkaClient: 'kafkajs' | 'platformatic';
  sinkThread: 'main' | 'worker';
  delivery: 'at-least-once' | 'exactly-once';
  /** Exactly-once: the slot (the watermark's key) and the transactional id derived from it. */
  slot?: string | undefined;
  transactionalId?: string | undefined;
  offsetsTopic: string;
  transactionTimeoutMs: number;
  transactionLanes: number;
  /** The sink thread's own logger. */
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

/** Makes the sink of one replication session: after any Kafka failure the producer is recreated. */
export type SinkFactory = (settings: SinkSettings, logger: Logger) => Sink;

/**
 * The sink thread's entry module: the compiled .js in dist, or the .ts source
 * under tsx (worker-sink.ts starts that one through tsx's API).
 */
const ENTRY = new URL(import.meta.url.endsWith('.ts') ? './thread/sink-thread-entry.ts' : './thread/sink-thread-entry.js', import.meta.url);

/** The worker thread of --sink-thread worker, which builds its own sink from the same settings. */
export function sinkThread(settings: SinkSettings): SinkThreadStart {
  return { entry: ENTRY, workerData: { settings } };
}

/** The Kafka sink of --kafka-client (kafkajs by default), --delivery and --sink-thread, with the connection, TLS and SASL settings. */
export function createKafkaSink(config: SinkSettings, logger: Logger): Sink {
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
  // This thread's sink still answers metadata(); the worker builds its own from the same settings.
  return config.sinkThread === 'worker' ? new WorkerSink(sinkThread(config), sink, logger) : sink;
}
