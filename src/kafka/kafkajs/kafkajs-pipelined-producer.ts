import { createRequire } from 'node:module';
import { Partitioners, type Kafka, type Message, type PartitionMetadata, type TopicMessages } from 'kafkajs';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';

/**
 * An idempotent producer on kafkajs's cluster and broker connections that
 * keeps up to `maxInFlightRequests` produce requests on the wire
 * (docs/architecture.md#pipelined-produce-chain). kafkajs's own producer
 * cannot: it holds a per-broker lock around each idempotent request and rolls
 * a failed request's sequence numbers back for the next one to take.
 *
 * The claims, and what makes them hold:
 * - A partition's batches are written in send() order. Each send takes its
 *   sequence numbers when it is handed over, in send() order, and the next
 *   hand-over waits until this one's requests are in their connections' queues
 *   (kafkajs encodes a request asynchronously, compression included, so two
 *   requests started back to back could reach the socket swapped). The broker
 *   writes an idempotent producer's batches only in sequence order (up to 5 in
 *   flight per connection, KIP-98): a request whose predecessor was not written
 *   is refused with OUT_OF_ORDER_SEQUENCE_NUMBER, never written ahead of it.
 * - Sequence numbers are never rewritten or rolled back. A send that failed
 *   leaves a gap the broker will not bridge, so no later send is handed over
 *   while any is outstanding; once none is, the producer id is renewed and the
 *   sequences start again at 0. Nothing is retried here: the failure ends the
 *   send, the session ends and the relay replays from the slot (duplicates,
 *   never a gap or a reorder).
 */

interface KafkajsBroker {
  nodeId: number;
  connectionPool: { getConnection(index?: number): Promise<{ requestQueue: object }> };
  initProducerId(request: { transactionalId?: string; transactionTimeout?: number }): Promise<{ producerId: unknown; producerEpoch: number }>;
  produce(request: {
    topicData: ProduceTopicData[];
    producerId: unknown;
    producerEpoch: number;
    acks: number;
    timeout: number;
    compression: number;
  }): Promise<unknown>;
}

interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  isConnected(): boolean;
  refreshMetadata(): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  findTopicPartitionMetadata(topic: string): PartitionMetadata[];
  findBroker(query: { nodeId: string | number }): Promise<KafkajsBroker>;
  findControllerBroker(): Promise<KafkajsBroker>;
}

interface ProduceTopicData {
  topic: string;
  partitions: Array<{ partition: number; firstSequence: number; messages: Message[] }>;
}

interface RequestQueueLike {
  push(request: { entry: { apiKey: number } }): void;
}

/** Produce's API key (kafkajs/src/protocol/requests/apiKeys.js). */
const PRODUCE_API_KEY = 0;
const REQUEST_QUEUE_MODULE = 'kafkajs/src/network/requestQueue/index.js';

/** Per request queue, who waits for its next produce request to be queued. */
const produceQueued = new WeakMap<object, Array<() => void>>();
let queueHooked = false;

/**
 * Lets a hand-over see the moment kafkajs has queued its produce request on a
 * connection (written now, or behind the requests in flight, in queue order).
 * Returns false where kafkajs's internals moved; the producer then only waits
 * for the request's encoding to start, and a swap shows as a refused send.
 */
function hookRequestQueue(): boolean {
  if (queueHooked) return true;
  try {
    const RequestQueue = createRequire(import.meta.url)(REQUEST_QUEUE_MODULE) as { prototype: RequestQueueLike };
    const push = RequestQueue.prototype.push;
    if (typeof push !== 'function') return false;
    RequestQueue.prototype.push = function pushAndTell(this: object, request) {
      push.call(this, request);
      if (request.entry.apiKey !== PRODUCE_API_KEY) return;
      produceQueued.get(this)?.shift()?.();
    };
    queueHooked = true;
    return true;
  } catch {
    return false;
  }
}

/** kafkajs's Kafka keeps the factory of its clusters under a private symbol; a producer of our own needs one. */
function createCluster(kafka: Kafka, options: { allowAutoTopicCreation: boolean; maxInFlightRequests: number }): KafkajsCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  const factory = symbol ? (kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
  if (typeof factory !== 'function') {
    throw new OutboxTailError(
      'CONFIG_INVALID',
      'this kafkajs has no cluster factory where 2.2.4 keeps it: more than one produce request in flight is not possible',
      {
        hint: 'install the kafkajs version package.json pins (npm ci), or run with --max-in-flight-requests 1',
      },
    );
  }
  return (factory as (o: object) => KafkajsCluster)({
    allowAutoTopicCreation: options.allowAutoTopicCreation,
    maxInFlightRequests: options.maxInFlightRequests,
  });
}

export interface PipelinedProducerOptions {
  maxInFlightRequests: number;
  allowAutoTopicCreation: boolean;
  /** kafkajs's CompressionTypes value of every batch. */
  compression: number;
  requestTimeoutMs: number;
}

export class KafkajsPipelinedProducer {
  private readonly cluster: KafkajsCluster;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private producerId: unknown = null;
  private producerEpoch = 0;
  /** Next sequence number per topic and partition, for the current producer id. */
  private sequences = new Map<string, Map<number, number>>();
  /** Resolves once the latest send's requests were queued (its sequence numbers taken). */
  private handedOver: Promise<void> = Promise.resolve();
  private failed = false;
  private outstanding = 0;
  private readonly queueHooked = hookRequestQueue();

  constructor(
    kafka: Kafka,
    private readonly options: PipelinedProducerOptions,
  ) {
    this.cluster = createCluster(kafka, options);
  }

  async connect(): Promise<void> {
    await this.cluster.connect();
    await this.initProducerId();
  }

  async disconnect(): Promise<void> {
    await this.cluster.disconnect();
  }

  /** Resolves when every record of the batch was acknowledged (acks=all); rejects with kafkajs's error otherwise. */
  async send(batch: readonly TopicMessages[]): Promise<void> {
    const previous = this.handedOver;
    let release!: () => void;
    this.handedOver = new Promise((resolve) => (release = resolve));
    this.outstanding++;
    try {
      let acked: Promise<unknown>;
      try {
        await previous;
        if (this.failed) {
          if (this.outstanding > 1) throw new OutboxTailError('KAFKA_ERROR', 'an earlier produce request failed', { retriable: true });
          await this.initProducerId();
          this.failed = false;
        }
        ({ acked } = await this.handOver(batch));
      } finally {
        release();
      }
      await acked;
    } catch (error) {
      this.failed = true;
      throw error;
    } finally {
      this.outstanding--;
    }
  }

  private async initProducerId(): Promise<void> {
    await this.cluster.refreshMetadataIfNecessary();
    const broker = await this.cluster.findControllerBroker();
    const { producerId, producerEpoch } = await broker.initProducerId({ transactionTimeout: 30_000 });
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.sequences = new Map();
  }

  /**
   * Partitions the records (kafkajs's default partitioner: Java's murmur2),
   * takes their sequence numbers and starts one produce request per leader.
   * Resolves, with the acknowledgement still to come, once every request is
   * queued on its connection.
   */
  private async handOver(batch: readonly TopicMessages[]): Promise<{ acked: Promise<unknown> }> {
    await this.cluster.addMultipleTargetTopics(batch.map((t) => t.topic));
    await this.cluster.refreshMetadataIfNecessary();
    const perLeader = new Map<number, ProduceTopicData[]>();
    for (const { topic, messages } of batch) {
      const partitionMetadata = this.cluster.findTopicPartitionMetadata(topic);
      if (partitionMetadata.length === 0) throw new OutboxTailError('KAFKA_ERROR', `no partition metadata for topic ${topic}`, { retriable: true });
      const byPartition = new Map<number, Message[]>();
      for (const message of messages) {
        const partition = this.partitioner({ topic, partitionMetadata, message });
        let list = byPartition.get(partition);
        if (!list) byPartition.set(partition, (list = []));
        list.push(message);
      }
      let next = this.sequences.get(topic);
      if (!next) this.sequences.set(topic, (next = new Map()));
      for (const [partition, list] of byPartition) {
        const leader = partitionMetadata.find((p) => p.partitionId === partition)?.leader;
        if (leader === undefined || leader < 0) throw new OutboxTailError('KAFKA_ERROR', `no leader for ${topic} partition ${partition}`, { retriable: true });
        const firstSequence = next.get(partition) ?? 0;
        // Sequence numbers wrap at 2^31 (Kafka's DefaultRecordBatch.incrementSequence).
        next.set(partition, (firstSequence + list.length) % 2 ** 31);
        let topics = perLeader.get(leader);
        if (!topics) perLeader.set(leader, (topics = []));
        let entry = topics.find((t) => t.topic === topic);
        if (!entry) topics.push((entry = { topic, partitions: [] }));
        entry.partitions.push({ partition, firstSequence, messages: list });
      }
    }
    const acks: Promise<unknown>[] = [];
    for (const [nodeId, topicData] of perLeader) {
      const broker = await this.cluster.findBroker({ nodeId });
      const queue = this.queueHooked ? (await broker.connectionPool.getConnection(0)).requestQueue : null;
      let tell: (() => void) | null = null;
      const queued = new Promise<void>((resolve) => {
        if (!queue) return resolve();
        const waiting = produceQueued.get(queue) ?? [];
        produceQueued.set(queue, waiting);
        waiting.push((tell = resolve));
      });
      const ack = broker.produce({
        topicData,
        producerId: this.producerId,
        producerEpoch: this.producerEpoch,
        acks: -1,
        timeout: this.options.requestTimeoutMs,
        compression: this.options.compression,
      });
      acks.push(ack);
      // A request that fails before it is queued (a closed connection) never tells the hook: stop waiting then,
      // and leave no waiter behind for a later request to resolve.
      await Promise.race([queued, ack.then(noop, noop)]);
      if (queue && tell) {
        const waiting = produceQueued.get(queue);
        const at = waiting?.indexOf(tell) ?? -1;
        if (at >= 0) waiting!.splice(at, 1);
      }
    }
    // In an object: awaiting the hand-over must not await the acknowledgement.
    return { acked: Promise.all(acks) };
  }
}

const noop = () => undefined;
