import { CompressionTypes, Kafka, logLevel as KafkaLogLevel, Partitioners, type Message, type Producer, type TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';
import { classifyKafkaError } from './kafka-errors.js';
import type { Sink, SinkRecord } from './sink.js';

export interface KafkaSinkOptions {
  brokers: string[];
  clientId: string;
  retries: number;
  connectTimeoutMs: number;
  allowAutoTopicCreation: boolean;
  logger: Logger;
}

/**
 * kafkajs producer with the settings of ARCHITECTURE.md §3: idempotent,
 * acks=all, one request in flight (order), Java-compatible murmur2 partitioner.
 * kafkajs has no linger, so the relay hands it several transactions per call.
 */
export class KafkaSink implements Sink {
  private readonly kafka: Kafka;
  private producer: Producer | null = null;

  constructor(private readonly options: KafkaSinkOptions) {
    const log = options.logger.child({ component: 'kafka' });
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      connectionTimeout: options.connectTimeoutMs,
      logLevel: KafkaLogLevel.WARN,
      logCreator: () => ({ namespace, level, log: entry }) => {
        const { message, timestamp: _t, logger: _l, ...extra } = entry;
        const line = { kafkajs: namespace, ...extra };
        if (level <= KafkaLogLevel.ERROR) log.error(line, message);
        else log.warn(line, message);
      },
      retry: { retries: options.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
  }

  async connect(): Promise<void> {
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: this.options.allowAutoTopicCreation,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: Math.max(1, this.options.retries), initialRetryTime: 200, maxRetryTime: 5_000 },
    });
    try {
      await producer.connect();
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw classifyKafkaError(error, 'connecting the Kafka producer');
    }
    this.producer = producer;
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    const producer = this.producer;
    if (!producer) throw new Error('KafkaSink.send before connect');
    if (records.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    for (const r of records) {
      let list = byTopic.get(r.topic);
      if (!list) byTopic.set(r.topic, (list = []));
      list.push({ key: r.key, value: r.value, headers: r.headers });
    }
    const topicMessages: TopicMessages[] = [];
    for (const [topic, messages] of byTopic) topicMessages.push({ topic, messages });
    try {
      await producer.sendBatch({ acks: -1, compression: CompressionTypes.None, topicMessages });
    } catch (error) {
      throw classifyKafkaError(error, `publishing ${records.length} record(s) to ${[...byTopic.keys()].join(', ')}`);
    }
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect().catch(() => undefined);
  }
}
