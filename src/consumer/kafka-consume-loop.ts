import { setTimeout as delay } from 'node:timers/promises';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { backoffDelay } from '../shared/backoff.js';
import { ValueDecoder } from '../schema-registry/value-decoder.js';
import { classifyKafkaError } from '../kafka/kafkajs/kafka-errors.js';
import { withKafkaAdmin } from '../kafka/kafkajs/with-kafka-admin.js';
import { decodeRecord, type DecodeResult } from './consumed-event.js';
import { errorMessage } from './consumer-errors.js';
import type { IdempotentConsumerOptions } from './consumer-options.js';
import type { ConsumerStats } from './consumer-stats.js';
import type { PartitionContext } from './partition-context.js';
import type { RecordProcessor } from './record-processor.js';

export interface KafkaConsumeLoopOptions<P> extends Pick<
  IdempotentConsumerOptions<P>,
  'groupId' | 'topics' | 'fromBeginning' | 'consumer' | 'partitionsConsumedConcurrently' | 'idHeader' | 'parsePayload' | 'batch' | 'schemaRegistry'
> {
  processor: RecordProcessor<P>;
  stats: ConsumerStats;
  log: Logger;
  /** Aborted by stop() and by a fatal error. */
  signal: AbortSignal;
  fail(error: OutboxTailError): void;
}

/** How often a consumer waiting for its topics looks again: from 1 s, backing off to 10 s. */
const TOPIC_WAIT_INITIAL_MS = 1_000;
const TOPIC_WAIT_MAX_MS = 10_000;

/** The named topics the cluster does not have; an authorisation failure throws (it stays an error). */
async function missingTopics(admin: Admin, topics: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const topic of topics) {
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
    } catch (error) {
      if ((error as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION') missing.push(topic);
      else throw error;
    }
  }
  return missing;
}

/**
 * The kafkajs side: joins the group, feeds each partition's batch to the
 * record processor in chunks, and commits an offset only when the processor
 * says so. Offsets are never committed automatically, so a record whose
 * transaction did not commit is always consumed again.
 */
export class KafkaConsumeLoop<P> {
  private consumer: Consumer | null = null;
  private subscribed = false;
  private readonly batchSize: number;
  private readonly valueDecoder: ValueDecoder | null;

  constructor(
    private readonly kafka: Kafka,
    private readonly o: KafkaConsumeLoopOptions<P>,
  ) {
    this.batchSize = o.batch?.maxRecords ?? 1;
    this.valueDecoder = o.schemaRegistry ? new ValueDecoder(o.schemaRegistry) : null;
  }

  /** Connects and subscribes; records flow only after run(). */
  async connect(): Promise<void> {
    const { groupId, log } = this.o;
    const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 1_000, ...this.o.consumer });
    // Kept before connect(), so disconnect() also cleans up a consumer that never connected.
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart) {
        log.warn({ err: errorMessage(payload.error) }, 'kafka consumer crashed; kafkajs restarts it');
      } else {
        this.o.fail(classifyKafkaError(payload.error, 'the kafka consumer crashed and will not restart'));
      }
    });
    await consumer.connect();
    if (!(await this.waitForTopics())) return;
    await consumer.subscribe({ topics: this.o.topics, fromBeginning: this.o.fromBeginning ?? true });
    this.subscribed = true;
  }

  /**
   * A consumer deployed before the relay published its first event waits for
   * its named topics (kafkajs' subscribe would fail with
   * UNKNOWN_TOPIC_OR_PARTITION), as a Java consumer does; an authorisation
   * error stays an error. Patterns match what exists at subscribe time.
   * False when stopped while waiting.
   */
  private async waitForTopics(): Promise<boolean> {
    const { topics, log, stats, signal } = this.o;
    const named = topics.filter((t): t is string => typeof t === 'string');
    if (named.length === 0) return true;
    let logged = '';
    for (let attempt = 1; ; attempt++) {
      const missing = await withKafkaAdmin(this.kafka, "checking that the consumer's topics exist", (admin) => missingTopics(admin, named));
      stats.topicsAwaited = missing;
      if (missing.length === 0) {
        if (logged) log.info({ event: 'topics-created', topics: named }, 'the topics exist now: joining the group');
        return true;
      }
      if (missing.join(',') !== logged) {
        logged = missing.join(',');
        log.warn(
          { event: 'waiting-for-topics', topics: missing },
          `topic(s) ${missing.join(', ')} do not exist yet: the consumer joins its group once they are created (the relay creates a topic with its first event, or create it yourself)`,
        );
      }
      await delay(backoffDelay(attempt, TOPIC_WAIT_INITIAL_MS, TOPIC_WAIT_MAX_MS), undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return false;
    }
  }

  async run(): Promise<void> {
    if (!this.subscribed) return;
    await this.consumer!.run({
      autoCommit: false, // offsets are committed by hand, each only after its DB transaction committed
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.o.partitionsConsumedConcurrently ?? 1,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  /** kafkajs waits for the running eachBatch (the current record or batch) before leaving the group. */
  async disconnect(): Promise<void> {
    await this.consumer?.disconnect().catch((error: unknown) => this.o.log.warn({ err: errorMessage(error) }, 'disconnecting the kafka consumer'));
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    const { topic, partition } = batch;
    const { signal, stats } = this.o;
    const ctx: PartitionContext = {
      topic,
      partition,
      halted: () => signal.aborted || !isRunning() || isStale(),
      commit: async (offset) => {
        // Explicit offsets: committed now, whatever autoCommit says, also while kafkajs is stopping
        // (consumer.commitOffsets() would silently skip the commit once stop() began).
        await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(offset) + 1n).toString() }] }] });
        stats.offsetCommits += 1;
        resolveOffset(offset);
      },
      sleep: async (ms) => {
        const until = Date.now() + ms;
        while (!signal.aborted && Date.now() < until) {
          await delay(Math.min(1_000, until - Date.now()), undefined, { signal }).catch(() => undefined);
          await heartbeat();
        }
      },
    };
    const messages = batch.messages;
    for (let i = 0; i < messages.length; i += this.batchSize) {
      if (ctx.halted()) return;
      const slice = messages.slice(i, i + this.batchSize);
      if (this.valueDecoder && !(await this.fetchSchemas(this.valueDecoder, slice, ctx))) return;
      const chunk = slice.map((m) => this.decode(topic, partition, m));
      if ((await this.o.processor.processChunk(chunk, ctx)) === 'halt') return;
      await heartbeat();
    }
  }

  private decode(topic: string, partition: number, message: EachBatchPayload['batch']['messages'][number]): DecodeResult<P> {
    const decodeValue = this.valueDecoder ? (value: Buffer) => this.valueDecoder!.decode(value) : undefined;
    return decodeRecord<P>(topic, partition, message, { idHeader: this.o.idHeader, parsePayload: this.o.parsePayload, decodeValue });
  }

  /**
   * The schemas the chunk's values name, fetched before any of them is
   * decoded; while the registry is unreachable the partition waits (nothing
   * is processed or committed) and retries. False when halted meanwhile.
   */
  private async fetchSchemas(decoder: ValueDecoder, slice: EachBatchPayload['batch']['messages'], ctx: PartitionContext): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await decoder.prepare(slice.map((m) => m.value));
        return true;
      } catch (error) {
        if (!OutboxTailError.is(error) || !error.retriable) throw error;
        this.o.log.warn({ err: error.message, attempt }, 'schema registry unreachable; retrying before decoding');
        await ctx.sleep(backoffDelay(attempt, 500, 30_000));
        if (ctx.halted()) return false;
      }
    }
  }
}
