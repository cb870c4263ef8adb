import type { Producer, SASLOptions as PltSaslOptions } from '@platformatic/kafka';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { tokenSourceOf, type KafkaSasl } from '../../kafka/kafka-security.js';
import type { KafkaSinkOptions } from '../../kafka/kafka-client-options.js';
import { javaPartition } from '../../kafka/platformatic/murmur2.js';
import type { ClusterMetadata, Sink } from '../sink.js';
import type { SinkRecord } from '../sink-record.js';

type PltProducer = Producer<Buffer, Buffer, string, string>;

interface PltLikeError {
  name?: string;
  code?: string;
  apiId?: string;
  message?: string;
  canRetry?: boolean;
  cause?: unknown;
  errors?: unknown[];
}

/** Every error in a @platformatic/kafka error tree (MultipleErrors nest their causes in `errors`). */
function flatten(error: unknown, out: PltLikeError[] = [], depth = 0): PltLikeError[] {
  if (!error || typeof error !== 'object' || depth > 6 || out.length > 50) return out;
  const e = error as PltLikeError;
  out.push(e);
  if (Array.isArray(e.errors)) for (const inner of e.errors) flatten(inner, out, depth + 1);
  if (e.cause && e.cause !== error) flatten(e.cause, out, depth + 1);
  return out;
}

/** Classifies a @platformatic/kafka error by its codes (never by message text), like classifyKafkaError does for kafkajs. */
export function classifyPlatformaticError(error: unknown, context: string): OutboxTailError {
  if (OutboxTailError.is(error)) return error;
  const errors = flatten(error);
  const codes = new Set(errors.flatMap((e) => [e.code, e.apiId]).filter((c): c is string => typeof c === 'string'));
  const leaf = errors.filter((e) => !Array.isArray(e.errors)).map((e) => `${e.apiId ?? e.code ?? e.name ?? 'Error'}: ${e.message ?? ''}`);
  const detail = `${context}: ${(leaf.length ? leaf : errors.map((e) => e.message ?? String(e))).slice(0, 5).join(' <- ')}`;
  if (codes.has('MESSAGE_TOO_LARGE') || codes.has('RECORD_LIST_TOO_LARGE')) {
    return new OutboxTailError('MESSAGE_TOO_LARGE', detail, {
      hint: "the record exceeds the broker's max.message.bytes (or the topic's); raise it or use --on-oversize=dead-letter",
      cause: error,
    });
  }
  if (codes.has('PLT_KFK_AUTHENTICATION') || codes.has('SASL_AUTHENTICATION_FAILED')) {
    return new OutboxTailError('KAFKA_AUTH_FAILED', detail, { hint: 'check the SASL mechanism, user and password for Kafka', cause: error });
  }
  if (codes.has('PLT_KFK_NETWORK') || codes.has('PLT_KFK_TIMEOUT')) {
    return new OutboxTailError('KAFKA_UNREACHABLE', detail, {
      retriable: true,
      hint: 'check --brokers and that the Kafka brokers are up and reachable',
      cause: error,
    });
  }
  // Everything else (leader changes, producer fencing, sequence errors, ...):
  // recreate the producer and replay from the slot.
  return new OutboxTailError('KAFKA_ERROR', detail, { retriable: true, cause: error });
}

/** Closes the producer's connections (forced: nothing of ours is in flight), errors ignored. */
function closeQuietly(producer: PltProducer): Promise<void> {
  return new Promise((resolve) => producer.close(true, () => resolve()));
}

const PLT_SASL_MECHANISMS = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
  oauthbearer: 'OAUTHBEARER',
  'aws-msk-iam': 'OAUTHBEARER',
} as const satisfies Record<KafkaSasl['mechanism'], PltSaslOptions['mechanism']>;

function pltSasl(sasl: KafkaSasl): PltSaslOptions {
  if (sasl.mechanism === 'oauthbearer' || sasl.mechanism === 'aws-msk-iam') {
    const source = tokenSourceOf(sasl);
    // The library asks again at every connection and at each re-authentication the broker's session lifetime calls for.
    return {
      mechanism: PLT_SASL_MECHANISMS[sasl.mechanism],
      token: async () => (await source()).value,
      oauthBearerExtensions: async () => (await source()).extensions ?? {},
    } as PltSaslOptions;
  }
  return { mechanism: PLT_SASL_MECHANISMS[sasl.mechanism], username: sasl.username, password: sasl.password };
}

/** Connection settings shared by the producer and the metadata client. */
function pltConnection(o: KafkaSinkOptions) {
  return {
    bootstrapBrokers: o.brokers,
    connectTimeout: o.connectTimeoutMs,
    timeout: o.requestTimeoutMs,
    ...(o.ssl ? { tls: o.ssl } : {}),
    ...(o.sasl ? { sasl: pltSasl(o.sasl) } : {}),
  };
}

/**
 * Pins the idempotent producer's id: the library re-inits it (new id,
 * sequences from 0) after a failed send and when the broker answers
 * OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID, and with requests in
 * flight that would let a later request be written while an earlier one of
 * the same partition was not. Refusing it fails that send instead. Returns
 * the library's own init, which the sink calls when nothing is in flight.
 */
function pinProducerId(producer: PltProducer): () => Promise<unknown> {
  const init = producer.initIdempotentProducer.bind(producer, {});
  const refuse = (_options: unknown, callback?: (error: Error) => void): Promise<never> | undefined => {
    const error = new OutboxTailError('KAFKA_ERROR', 'the idempotent producer lost its sequence state with produce requests in flight', { retriable: true });
    if (!callback) return Promise.reject(error);
    callback(error);
    return undefined;
  };
  Object.defineProperty(producer, 'initIdempotentProducer', { value: refuse });
  return () => init();
}

/**
 * The Sink on @platformatic/kafka, selected with --kafka-client platformatic:
 * the same contract as KafkaSink (idempotent producer, acks=all, resolves
 * only when every record of the batch is acknowledged, the Java-compatible
 * partition for each key), with a leaner record encoder than kafkajs (see
 * docs/performance.md). With --max-in-flight-requests above 1, several sends
 * may be outstanding (docs/architecture.md#pipelined-produce-chain): each gets
 * its sequence numbers when it is handed to the library, in send() order, on
 * one producer id; the broker writes a partition's batches only in sequence
 * order, so a later request is never written when an earlier one was not.
 */
export class PlatformaticKafkaSink implements Sink {
  private producer: PltProducer | null = null;
  readonly maxInFlightRequests: number;
  /** Resolves once the latest send was handed to the library (its sequence numbers assigned). */
  private handedOver: Promise<void> = Promise.resolve();
  /**
   * Pipelined: a send failed, so no later one may be handed over while any is
   * outstanding (it could take sequence numbers the failed one left free);
   * once none is, the producer id is renewed.
   */
  private failed = false;
  private outstanding = 0;
  private renewProducerId: (() => Promise<unknown>) | null = null;

  constructor(private readonly options: KafkaSinkOptions) {
    this.maxInFlightRequests = options.maxInFlightRequests ?? 1;
  }

  async connect(): Promise<void> {
    const o = this.options;
    // Loaded on first use: the library compiles its option validators at import
    // time, which costs start-up time and memory in relays that use kafkajs.
    const { Producer, ProduceAcks, stringSerializer } = await import('@platformatic/kafka');
    const pipelined = this.maxInFlightRequests > 1;
    const producer: PltProducer = new Producer({
      ...pltConnection(o),
      clientId: o.clientId,
      retries: o.retries,
      retryDelay: 200,
      // An idempotent producer is built with one request in flight per connection (the library forces it); pipelined,
      // the connections take maxInflights and every send is idempotent instead (send({ idempotent: true })).
      idempotent: !pipelined,
      ...(pipelined ? { maxInflights: this.maxInFlightRequests } : {}),
      acks: ProduceAcks.ALL,
      // The library's codecs are the WebAssembly ones kafkajs gets too (compression-codecs.ts).
      ...(o.compression && o.compression !== 'none' ? { compression: o.compression } : {}),
      autocreateTopics: o.allowAutoTopicCreation,
      serializers: { key: (key?: Buffer) => key, value: (value?: Buffer) => value, headerKey: stringSerializer, headerValue: stringSerializer },
    });
    try {
      // Connects, and gets the producer id now rather than at the first send.
      await producer.initIdempotentProducer({});
    } catch (error) {
      await closeQuietly(producer);
      throw classifyPlatformaticError(error, 'connecting the Kafka producer (@platformatic/kafka)');
    }
    if (pipelined) this.renewProducerId = pinProducerId(producer);
    this.producer = producer;
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    const producer = this.producer;
    if (!producer) throw new Error('PlatformaticKafkaSink.send before connect');
    if (records.length === 0) return;
    const topics = [...new Set(records.map((r) => r.topic))];
    const context = `publishing ${records.length} record(s) to ${topics.join(', ')}`;
    if (!this.renewProducerId) return this.sendNow(producer, records, topics, context);
    // Pipelined: hand sends to the library in send() order, so a later send never takes lower sequence numbers.
    const previous = this.handedOver;
    let handOver!: () => void;
    this.handedOver = new Promise((resolve) => (handOver = resolve));
    this.outstanding++;
    try {
      let acked: Promise<unknown>;
      try {
        await previous;
        if (this.failed) {
          if (this.outstanding > 1) throw new OutboxTailError('KAFKA_ERROR', `${context}: an earlier produce request failed`, { retriable: true });
          await this.renewProducerId();
          this.failed = false;
        }
        ({ acked } = await this.handOver(producer, records, topics));
      } finally {
        handOver();
      }
      await acked;
    } catch (error) {
      this.failed = true;
      throw classifyPlatformaticError(error, context);
    } finally {
      this.outstanding--;
    }
  }

  private async sendNow(producer: PltProducer, records: readonly SinkRecord[], topics: string[], context: string): Promise<void> {
    try {
      const { acked } = await this.handOver(producer, records, topics);
      await acked;
    } catch (error) {
      throw classifyPlatformaticError(error, context);
    }
  }

  /**
   * Partitions the records and calls the library's send. Its sequence numbers
   * are assigned within that call: the metadata fetched here is cached, so the
   * library looks it up synchronously.
   */
  private async handOver(producer: PltProducer, records: readonly SinkRecord[], topics: string[]): Promise<{ acked: Promise<unknown> }> {
    // Partitions are chosen here, with Java's default partitioner (kafkajs's
    // DefaultPartitioner computes the same), so a key keeps its partition
    // whichever client published it. Metadata is cached by the client
    // (metadataMaxAge) and fetched on the first record of a new topic.
    const metadata = await producer.metadata({ topics, autocreateTopics: this.options.allowAutoTopicCreation });
    const messages = new Array(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const key = Buffer.from(r.key);
      const count = metadata.topics.get(r.topic)?.partitionsCount;
      if (!count) throw new OutboxTailError('KAFKA_ERROR', `no partition metadata for topic ${r.topic}`, { retriable: true });
      messages[i] = { topic: r.topic, key, value: r.value, headers: r.headers, partition: javaPartition(key, count) };
    }
    // Returned in an object: awaiting this function must not await the acknowledgement.
    return { acked: this.renewProducerId ? producer.send({ messages, idempotent: true }) : producer.send({ messages }) };
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    if (producer) await closeQuietly(producer);
  }

  async metadata(topics: readonly string[] = []): Promise<ClusterMetadata> {
    const { Admin } = await import('@platformatic/kafka');
    // Few retries: the caller (preflight) reports an unreachable cluster itself, at once.
    const admin = new Admin({ ...pltConnection(this.options), clientId: `${this.options.clientId}-metadata`, retries: 2, retryDelay: 200 });
    try {
      const existing = new Set(topics.length > 0 ? await admin.listTopics() : []);
      const wanted = topics.filter((t) => existing.has(t));
      const cluster = await admin.metadata({ topics: wanted, autocreateTopics: false });
      const partitions = new Map<string, number>();
      for (const t of wanted) {
        const count = cluster.topics.get(t)?.partitionsCount;
        if (count !== undefined) partitions.set(t, count);
      }
      return { brokers: cluster.brokers.size, topics: partitions };
    } catch (error) {
      throw classifyPlatformaticError(error, `cannot reach Kafka brokers ${this.options.brokers.join(',')}`);
    } finally {
      await admin.close().catch(() => undefined);
    }
  }
}
