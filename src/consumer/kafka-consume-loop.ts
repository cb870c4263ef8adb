import { setTimeout as delay } from 'node:timers/promises';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { backoffDelay } from '../shared/backoff.js';
import { ValueDecoder } from '../schema-registry/value-decoder.js';
import { classifyKafkaError } from '../kafka/kafkajs/kafka-errors.js';
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

/**
 * The kafkajs side: joins the group, feeds each partition's batch to the
 * record processor in chunks, and commits an offset only when the processor
 * says so. Offsets are never committed automatically, so a record whose
 * transaction did not commit is always consumed again.
 */
export class KafkaConsumeLoop<P> {
  private consumer: Consumer | null = null;
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
    await consumer.subscribe({ topics: this.o.topics, fromBeginning: this.o.fromBeginning ?? true });
  }

  async run(): Promise<void> {
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
