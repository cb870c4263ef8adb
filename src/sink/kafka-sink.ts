import type { ConnectionOptions } from 'node:tls';
import { CompressionTypes, Kafka, logLevel as KafkaLogLevel, Partitioners, type Message, type Producer, type SASLOptions, type TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';
import { readPem, type RelayConfig } from '../config/config-schema.js';
import { classifyKafkaError } from '../kafka/kafka-errors.js';
import type { Sink, SinkRecord } from './sink.js';

export interface KafkaSinkOptions {
  brokers: string[];
  clientId: string;
  retries: number;
  connectTimeoutMs: number;
  allowAutoTopicCreation: boolean;
  logger: Logger;
  /** TLS to the brokers (true = system CAs); see kafkaSecurity(). */
  ssl?: ConnectionOptions | boolean;
  sasl?: SASLOptions;
}

const IDEMPOTENT_RETRIES_WARNING = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';

type KafkaSecurityKeys = 'kafkaSsl' | 'kafkaSslCa' | 'kafkaSslCert' | 'kafkaSslKey' | 'saslMechanism' | 'saslUsername' | 'saslPassword';

/**
 * kafkajs `ssl` and `sasl` from the config: TLS with host name verification
 * (CA, client certificate and key read from PEM files), SASL PLAIN or
 * SCRAM-SHA-256/512. Shared by the sink and every other Kafka client the relay
 * opens, so all of them connect the same way.
 */
export function kafkaSecurity(config: Partial<Pick<RelayConfig, KafkaSecurityKeys>>): { ssl?: ConnectionOptions | boolean; sasl?: SASLOptions } {
  const out: { ssl?: ConnectionOptions | boolean; sasl?: SASLOptions } = {};
  if (config.kafkaSsl || config.kafkaSslCa || config.kafkaSslCert) {
    const tls: ConnectionOptions = { rejectUnauthorized: true };
    if (config.kafkaSslCa) tls.ca = readPem(config.kafkaSslCa, 'kafkaSslCa');
    if (config.kafkaSslCert) tls.cert = readPem(config.kafkaSslCert, 'kafkaSslCert');
    if (config.kafkaSslKey) tls.key = readPem(config.kafkaSslKey, 'kafkaSslKey');
    out.ssl = tls;
  }
  if (config.saslMechanism) {
    const username = config.saslUsername ?? '';
    const password = config.saslPassword ?? '';
    out.sasl =
      config.saslMechanism === 'plain'
        ? { mechanism: 'plain', username, password }
        : { mechanism: config.saslMechanism, username, password };
  }
  return out;
}

/** KafkaSink options from the config (connection, retries, TLS, SASL). */
export function kafkaSinkOptions(config: RelayConfig, logger: Logger): KafkaSinkOptions {
  return {
    brokers: config.brokers,
    clientId: config.clientId,
    retries: config.kafkaRetries,
    connectTimeoutMs: config.connectTimeoutMs,
    allowAutoTopicCreation: config.allowAutoTopicCreation,
    logger,
    ...kafkaSecurity(config),
  };
}

/**
 * kafkajs producer with the settings of docs/architecture.md#kafka-producer: idempotent,
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
      ...(options.ssl !== undefined ? { ssl: options.ssl } : {}),
      ...(options.sasl !== undefined ? { sasl: options.sasl } : {}),
      logLevel: KafkaLogLevel.WARN,
      logCreator: () => ({ namespace, level, log: entry }) => {
        const { message, timestamp: _t, logger: _l, ...extra } = entry;
        const line = { kafkajs: namespace, ...extra };
        // kafkajs warns at every producer start because retries are bounded. They are on purpose:
        // after the last retry the session ends and the relay replays from the slot, which keeps
        // every record (the consumer absorbs the duplicates), so the warning would only alarm operators.
        if (message === IDEMPOTENT_RETRIES_WARNING) log.debug(line, message);
        else if (level <= KafkaLogLevel.ERROR) log.error(line, message);
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
      // The record itself is a kafkajs Message (key, value, headers; kafkajs ignores the rest): no copy per record.
      list.push(r);
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
