import { hostname } from 'node:os';
import { kafkajsCompression } from '../../kafka/kafkajs/kafkajs-codecs.js';
import { type Kafka, logLevel as KafkaLogLevel, type Producer, type Transaction as KafkaTransaction } from 'kafkajs';
import { createKafka } from '../../kafka/kafkajs/create-kafka.js';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { encodeWatermark, type Watermark } from '../watermark.js';
import { classifyKafkaError } from '../../kafka/kafkajs/kafka-errors.js';
import { kafkajsLogCreator } from '../../kafka/kafkajs/kafkajs-log-creator.js';
import { cacheTransactionCoordinator } from '../../kafka/kafkajs/kafkajs-coordinator-cache.js';
import { installRecordEncoder, INTENDED_WARNINGS, KafkaSink, producerSettings } from './kafka-sink.js';
import { connectionConfig } from '../../kafka/kafkajs/connection-config.js';
import type { KafkaSinkOptions } from '../../kafka/kafka-client-options.js';
import { readWatermark } from './watermark-reader.js';
import type { ClusterMetadata, Sealed, TransactionalSink, WatermarkPosition } from '../sink.js';
import type { SinkRecord } from '../sink-record.js';
import { topicMessages } from './topic-messages.js';

export interface TransactionalKafkaSinkOptions extends KafkaSinkOptions {
  slot: string;
  transactionalId: string;
  offsetsTopic: string;
  transactionTimeoutMs: number;
  /** Transactional producers taking turns, one Kafka transaction each (--transaction-lanes). */
  lanes: number;
}

/** The transactional id of lane `index`: lane 0 keeps the configured id, so one lane is the single-producer relay of before. */
export function laneTransactionalId(transactionalId: string, index: number): string {
  return index === 0 ? transactionalId : `${transactionalId}.${index + 1}`;
}

/** One transactional producer and its open Kafka transaction. */
export interface Lane {
  readonly transactionalId: string;
  producer: Producer | null;
  txn: KafkaTransaction | null;
  /** When the open transaction's first records were sent: the broker's transaction timeout runs from there. */
  txnStartedAt: number;
}

/** Errors that mean the brokers will not run transactions for us, whatever we retry. */
const NO_TRANSACTIONS = new Set([
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_TRANSACTION_TIMEOUT',
  'UNSUPPORTED_VERSION',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
]);
/**
 * Right after EndTxn the coordinator still writes the commit markers, and the
 * next transaction's AddPartitionsToTxn gets CONCURRENT_TRANSACTIONS until it
 * is done (a few ms). kafkajs retries that with the producer's backoff, so the
 * transactional producer starts at 12 ms instead of 200 ms (measured: a send
 * after a commit waited ~200 ms, p90 226 ms, 72 ms mean, at 200 ms; the Java
 * client retries this case after 20 ms) and retries 4 times more, which keeps
 * the whole retry window the same (12 x 2^(n+4) ~ 200 x 2^n).
 */
export function transactionalRetry(retries: number): { retries: number; initialRetryTime: number; maxRetryTime: number } {
  return { retries: Math.max(1, retries) + 4, initialRetryTime: 12, maxRetryTime: 5_000 };
}

/** kafkajs's error line for that retry: normal operation, logged at debug. */
export const CONCURRENT_TRANSACTIONS_RETRY = new Set([
  'Failed to send messages: The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
  // The Connection's "Response AddPartitionsToTxn(...)" line carries it as its `error`.
  'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
]);

/** A newer producer with our transactional id exists (or the coordinator aborted our transaction). */
const FENCED = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'INVALID_TXN_STATE', 'TRANSACTIONAL_ID_NOT_FOUND']);

function errorTypes(error: unknown): Set<string> {
  const types = new Set<string>();
  let current = error as { type?: string; cause?: unknown; originalError?: unknown } | undefined;
  for (let i = 0; current && typeof current === 'object' && i < 10; i++) {
    if (current.type) types.add(current.type);
    current = (current.cause ?? current.originalError) as typeof current;
  }
  return types;
}

/**
 * The exactly-once kafkajs sink (docs/architecture.md#exactly-once):
 * transactional, idempotent producers (acks=all, one request in flight) whose
 * transactional ids belong to one slot. The watermark record is the last one
 * of every Kafka transaction, so it commits or aborts with the records.
 *
 * The producers (lanes) take turns, one Kafka transaction each. The next
 * one begins once the previous one is sealed (its records and watermark
 * acknowledged, EndTxn sent), and is itself sealed only after the previous
 * EndTxn succeeded: so at most one Kafka transaction is open and one in
 * doubt, its records follow the previous one's in every partition, and the
 * watermarks commit in offset order. What the turns buy: the next
 * transaction's AddPartitionsToTxn and produce requests overlap EndTxn; and
 * after EndTxn the coordinator still writes the commit markers, during which
 * the same producer's next AddPartitionsToTxn is refused with
 * CONCURRENT_TRANSACTIONS and retried after a backoff, while the other
 * lane's coordinator state is not busy.
 */
export class TransactionalKafkaSink implements TransactionalSink {
  readonly transactional = true as const;
  private readonly kafka: Kafka;
  private readonly plain: KafkaSink;
  private readonly relayId = `${hostname()}:${process.pid}`;
  private readonly lanes: Lane[];
  /** The lane whose turn it is: its transaction is the open one. */
  private turn = 0;
  /** The last sealed transaction's EndTxn, while another lane's transaction may already take records. */
  private committing: Promise<void> | null = null;

  constructor(private readonly options: TransactionalKafkaSinkOptions) {
    cacheTransactionCoordinator();
    this.plain = new KafkaSink(options);
    this.lanes = Array.from({ length: Math.max(1, options.lanes) }, (_, i) => ({
      transactionalId: laneTransactionalId(options.transactionalId, i),
      producer: null,
      txn: null,
      txnStartedAt: 0,
    }));
    this.kafka = createKafka({
      ...connectionConfig(options),
      clientId: options.clientId,
      logLevel: KafkaLogLevel.WARN,
      logCreator: kafkajsLogCreator(options.logger.child({ component: 'kafka' }), INTENDED_WARNINGS, CONCURRENT_TRANSACTIONS_RETRY),
      retry: { retries: options.retries, initialRetryTime: 200, maxRetryTime: 5_000 },
    });
  }

  metadata(topics?: readonly string[]): Promise<ClusterMetadata> {
    return this.plain.metadata(topics);
  }

  /**
   * Connects and fences every lane: InitProducerId bumps the epoch of each
   * transactional id and aborts (or completes) a predecessor's open
   * transaction, before the watermark is read.
   */
  async connect(): Promise<void> {
    installRecordEncoder(this.options.logger);
    this.turn = 0;
    this.committing = null;
    for (const lane of this.lanes) {
      const producer = this.kafka.producer({
        ...producerSettings(this.options),
        retry: transactionalRetry(this.options.retries),
        transactionalId: lane.transactionalId,
        transactionTimeout: this.options.transactionTimeoutMs,
      });
      try {
        await producer.connect();
        lane.producer = producer;
        // kafkajs sends the transactional InitProducerId with the first transaction: open it now, so fencing happens before we read the watermark.
        await this.begin(lane);
      } catch (error) {
        lane.producer = null;
        await producer.disconnect().catch(() => undefined);
        throw this.classify(error, `starting the transactional Kafka producer ${lane.transactionalId} (InitProducerId)`, lane);
      }
    }
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    if (records.length === 0) return;
    const lane = this.lanes[this.turn]!;
    const txn = lane.txn ?? (await this.begin(lane));
    const batch = topicMessages(records);
    lane.txnStartedAt ||= Date.now();
    try {
      await txn.sendBatch({ acks: -1, compression: kafkajsCompression(this.options.compression), topicMessages: batch });
    } catch (error) {
      throw this.classify(error, `publishing ${records.length} record(s) in a Kafka transaction to ${batch.map((t) => t.topic).join(', ')}`, lane);
    }
  }

  async commit(position: WatermarkPosition, records: readonly SinkRecord[] = []): Promise<void> {
    const { committed } = await this.seal(position, records);
    await committed;
  }

  /**
   * Appends the watermark to the open Kafka transaction (with its last batch),
   * sends EndTxn and passes the turn to the next lane without waiting for it:
   * the next Kafka transaction's AddPartitionsToTxn and produce requests
   * overlap this one's EndTxn. That next transaction is sealed only after
   * this EndTxn succeeded, so one Kafka transaction at most is ever in doubt
   * and the watermarks commit in order. One lane: EndTxn is awaited here (its
   * producer cannot begin the next transaction before).
   */
  async seal(position: WatermarkPosition, records: readonly SinkRecord[] = []): Promise<Sealed> {
    await this.previousCommit();
    const lane = this.lanes[this.turn]!;
    const txn = lane.txn ?? (await this.begin(lane));
    const watermark: Watermark = { ...position, slot: this.options.slot, transactionalId: this.options.transactionalId, relayId: this.relayId };
    const offsets = { topic: this.options.offsetsTopic, messages: [{ key: this.options.slot, value: encodeWatermark(watermark) }] };
    lane.txnStartedAt ||= Date.now();
    try {
      // The last batch and the watermark in one produce request (one AddPartitionsToTxn for both).
      if (records.length > 0)
        await txn.sendBatch({ acks: -1, compression: kafkajsCompression(this.options.compression), topicMessages: [...topicMessages(records), offsets] });
      else await txn.send({ ...offsets, acks: -1, compression: kafkajsCompression(this.options.compression) });
    } catch (error) {
      // The Kafka transaction stays open: disconnect() aborts it.
      throw this.classify(error, `publishing ${records.length} record(s) and the watermark in a Kafka transaction`, lane);
    }
    // From here the transaction is the coordinator's to finish: abort() and disconnect() leave it alone.
    lane.txn = null;
    const committed = this.endTxn(lane, txn).catch((error: unknown) => {
      // In doubt (a lost EndTxn reply may still have committed): no later transaction may be sealed; the session ends and
      // the next one fences every lane before it reads the watermark.
      throw this.classify(error, `committing a Kafka transaction (watermark ${position.count} record(s))`, lane);
    });
    this.turn = (this.turn + 1) % this.lanes.length;
    if (this.lanes.length === 1) {
      await committed;
      return { committed };
    }
    this.committing = committed;
    // Observed by previousCommit() or the caller; never an unhandled rejection.
    committed.catch(() => undefined);
    return { committed };
  }

  /** The previous lane's EndTxn, which must have succeeded before another transaction is sealed (rejects if it failed). */
  protected async previousCommit(): Promise<void> {
    const pending = this.committing;
    if (!pending) return;
    await pending;
    if (this.committing === pending) this.committing = null;
  }

  /** EndTxn (commit) of a sealed transaction. */
  protected endTxn(_lane: Readonly<Lane>, txn: KafkaTransaction): Promise<void> {
    return txn.commit();
  }

  async abort(): Promise<void> {
    const lane = this.lanes[this.turn]!;
    const txn = lane.txn;
    lane.txn = null;
    if (txn?.isActive()) await txn.abort().catch(() => undefined);
  }

  async disconnect(): Promise<void> {
    // An open transaction left behind would hold back read_committed consumers until the broker times it out.
    for (const lane of this.lanes) {
      const txn = lane.txn;
      lane.txn = null;
      if (txn?.isActive()) await txn.abort().catch(() => undefined);
      const producer = lane.producer;
      lane.producer = null;
      await producer?.disconnect().catch(() => undefined);
    }
  }

  readWatermark(): Promise<Watermark | null> {
    const { offsetsTopic, slot, transactionalId, logger } = this.options;
    return readWatermark(this.kafka, { offsetsTopic, slot, transactionalId, logger });
  }

  private async begin(lane: Lane): Promise<KafkaTransaction> {
    const producer = lane.producer;
    if (!producer) throw new Error('TransactionalKafkaSink used before connect');
    try {
      lane.txn = await producer.transaction();
    } catch (error) {
      throw this.classify(error, `beginning a Kafka transaction (${lane.transactionalId})`, lane);
    }
    lane.txnStartedAt = 0;
    return lane.txn;
  }

  private classify(error: unknown, context: string, lane: Lane): OutboxTailError {
    if (OutboxTailError.is(error)) return error;
    const types = errorTypes(error);
    const base = classifyKafkaError(error, context);
    if ([...types].some((t) => NO_TRANSACTIONS.has(t))) {
      return new OutboxTailError('KAFKA_TRANSACTIONS_UNAVAILABLE', `exactly-once delivery: the brokers refuse transactions: ${base.message}`, {
        hint: `allow transactions for ${this.lanes.map((l) => l.transactionalId).join(', ')} (ACL on the TransactionalId resource, Kafka 0.11+), keep --transaction-timeout-ms (${this.options.transactionTimeoutMs}) at or under the broker's transaction.max.timeout.ms, and make sure transaction.state.log.replication.factor / min.isr fit the cluster; or run --delivery at-least-once`,
        cause: error,
      });
    }
    if ([...types].some((t) => FENCED.has(t))) {
      const age = lane.txnStartedAt ? Date.now() - lane.txnStartedAt : 0;
      if (age >= this.options.transactionTimeoutMs) {
        return new OutboxTailError(
          'KAFKA_PRODUCER_FENCED',
          `exactly-once delivery: the Kafka transaction was open ${Math.round(age / 1000)} s, longer than --transaction-timeout-ms, and the broker aborted it: ${base.message}`,
          {
            hint: `raise --transaction-timeout-ms (now ${this.options.transactionTimeoutMs}; at most the broker's transaction.max.timeout.ms) so the largest PostgreSQL transaction can be published in one Kafka transaction`,
            cause: error,
          },
        );
      }
      // Another relay took the transactional id (a standby that took the slot over): publish nothing more. The next
      // session starts with the slot, so this relay becomes a standby if the other one holds it.
      return new OutboxTailError(
        'KAFKA_PRODUCER_FENCED',
        `exactly-once delivery: fenced by a newer producer with transactional id ${lane.transactionalId}: ${base.message}`,
        { retriable: true, cause: error },
      );
    }
    return base;
  }
}
