import type { Logger } from 'pino';
import { kafkajsCompression } from '../../kafka/kafkajs/kafkajs-codecs.js';
import { type Kafka, logLevel as KafkaLogLevel, Partitioners, type Producer, type ProducerConfig } from 'kafkajs';
import { createKafka } from '../../kafka/kafkajs/create-kafka.js';
import { installFastRecordEncoder } from '../../kafka/kafkajs/kafkajs-record-encoder.js';
import { kafkajsLogCreator } from '../../kafka/kafkajs/kafkajs-log-creator.js';
import { classifyKafkaError } from '../../kafka/kafkajs/kafka-errors.js';
import type { KafkaSinkOptions } from '../../kafka/kafka-client-options.js';
import type { ClusterMetadata, Sink } from '../sink.js';
import type { SinkRecord } from '../sink-record.js';
import { topicMessages } from './topic-messages.js';
import { connectionConfig } from '../../kafka/kafkajs/connection-config.js';
import { withKafkaAdmin } from '../../kafka/kafkajs/with-kafka-admin.js';
import { KafkajsPipelinedProducer } from '../../kafka/kafkajs/kafkajs-pipelined-producer.js';

/**
 * kafkajs warns at every producer start because retries are bounded. They are
 * on purpose: after the last retry the session ends and the relay replays
 * from the slot, which keeps every record (the consumer absorbs the duplicates).
 */
export const INTENDED_WARNINGS: ReadonlySet<string> = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees']);

/**
 * kafkajs producer with the settings of docs/architecture.md#kafka-producer: idempotent,
 * acks=all, one request in flight (order), Java-compatible murmur2 partitioner.
 * kafkajs has no linger, so the relay hands it several transactions per call.
 */
/**
 * The producer settings both kafkajs sinks publish with: idempotent, one
 * request in flight (order per partition), Java-compatible partitioning,
 * bounded retries (the session ends and replays from the slot).
 */
export function producerSettings(options: Pick<KafkaSinkOptions, 'allowAutoTopicCreation' | 'retries'>): ProducerConfig {
  return {
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: options.allowAutoTopicCreation,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: Math.max(1, options.retries), initialRetryTime: 200, maxRetryTime: 5_000 },
  };
}

let encoderChecked = false;

/**
 * Puts the fast record encoder into kafkajs before this thread's first produce
 * request. It replaces two internal modules of kafkajs 2.2.4 (the version is
 * pinned exactly for that reason); where they moved, kafkajs keeps its own
 * encoder, which is slower but writes the same bytes, and the relay says so
 * once per thread that publishes instead of falling back silently.
 */
export function installRecordEncoder(logger: Logger): void {
  const installed = installFastRecordEncoder();
  if (installed || encoderChecked) return;
  encoderChecked = true;
  logger.warn(
    { event: 'kafkajs-encoder-fallback' },
    "kafkajs's own record encoder is in use: the fast encoder could not replace its internal modules (kafkajs is not 2.2.4, or they loaded first); records are the same, publishing costs more CPU. Install the kafkajs version package.json pins (npm ci)",
  );
}

export class KafkaSink implements Sink {
  private readonly kafka: Kafka;
  private producer: Producer | null = null;
  /** With --max-in-flight-requests above 1: our pipelined idempotent producer on kafkajs's connections. */
  private pipelined: KafkajsPipelinedProducer | null = null;
  readonly maxInFlightRequests: number;

  constructor(private readonly options: KafkaSinkOptions) {
    this.maxInFlightRequests = options.maxInFlightRequests ?? 1;
    this.kafka = createKafka({
      ...connectionConfig(options),
      clientId: options.clientId,
      logLevel: KafkaLogLevel.WARN,
      logCreator: kafkajsLogCreator(options.logger.child({ component: 'kafka' }), INTENDED_WARNINGS),
      retry: { retries: options.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
  }

  async connect(): Promise<void> {
    installRecordEncoder(this.options.logger);
    if (this.maxInFlightRequests > 1) {
      const pipelined = new KafkajsPipelinedProducer(this.kafka, {
        maxInFlightRequests: this.maxInFlightRequests,
        allowAutoTopicCreation: this.options.allowAutoTopicCreation,
        compression: kafkajsCompression(this.options.compression),
        requestTimeoutMs: this.options.requestTimeoutMs,
      });
      try {
        await pipelined.connect();
      } catch (error) {
        await pipelined.disconnect().catch(() => undefined);
        throw classifyKafkaError(error, 'connecting the Kafka producer');
      }
      this.pipelined = pipelined;
      return;
    }
    const producer = this.kafka.producer(producerSettings(this.options));
    try {
      await producer.connect();
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw classifyKafkaError(error, 'connecting the Kafka producer');
    }
    this.producer = producer;
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    if (this.pipelined) return this.sendPipelined(this.pipelined, records);
    const producer = this.producer;
    if (!producer) throw new Error('KafkaSink.send before connect');
    if (records.length === 0) return;
    const batch = topicMessages(records);
    try {
      await producer.sendBatch({ acks: -1, compression: kafkajsCompression(this.options.compression), topicMessages: batch });
    } catch (error) {
      throw classifyKafkaError(error, `publishing ${records.length} record(s) to ${batch.map((t) => t.topic).join(', ')}`);
    }
  }

  private async sendPipelined(pipelined: KafkajsPipelinedProducer, records: readonly SinkRecord[]): Promise<void> {
    if (records.length === 0) return;
    const batch = topicMessages(records);
    try {
      await pipelined.send(batch);
    } catch (error) {
      throw classifyKafkaError(error, `publishing ${records.length} record(s) to ${batch.map((t) => t.topic).join(', ')}`);
    }
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    const pipelined = this.pipelined;
    this.producer = null;
    this.pipelined = null;
    await producer?.disconnect().catch(() => undefined);
    await pipelined?.disconnect().catch(() => undefined);
  }

  async metadata(topics: readonly string[] = []): Promise<ClusterMetadata> {
    // Its own client, quiet and with few retries: the caller (preflight) reports an
    // unreachable cluster itself, at once. An admin never creates topics.
    const kafka = createKafka({
      ...connectionConfig(this.options),
      clientId: `${this.options.clientId}-metadata`,
      logLevel: KafkaLogLevel.NOTHING,
      retry: { retries: 2 },
    });
    return withKafkaAdmin(kafka, `cannot reach Kafka brokers ${this.options.brokers.join(',')}`, async (admin) => {
      const { brokers } = await admin.describeCluster();
      const existing = new Set(topics.length > 0 ? await admin.listTopics() : []);
      const wanted = topics.filter((t) => existing.has(t));
      const described = wanted.length > 0 ? (await admin.fetchTopicMetadata({ topics: wanted })).topics : [];
      return { brokers: brokers.length, topics: new Map(described.map((t) => [t.name, t.partitions.length])) };
    });
  }
}
