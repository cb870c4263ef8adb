import { setTimeout as delay } from 'node:timers/promises';
import {
  Kafka,
  logLevel as KafkaLogLevel,
  Partitioners,
  type Consumer,
  type EachBatchPayload,
  type KafkaConfig,
  type Producer,
} from 'kafkajs';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { EXIT, OutboxTailError } from '../errors/outbox-tail-error.js';
import { backoffDelay } from '../relay/backoff.js';
import { classifyKafkaError } from '../kafka/kafka-errors.js';
import { decodeRecord, type ConsumedEvent, type DecodeResult } from './consumed-event.js';
import { errorMessage, isTransientPgError } from './consumer-errors.js';
import { ConsumerStats } from './consumer-stats.js';
import { buildDeadLetterMessage } from './dead-letter.js';
import { DEFAULT_PROCESSED_TABLE, insertProcessedSql } from './processed-messages.js';
import { quoteTableName } from './sql.js';

/**
 * Applies one event inside the consumer's transaction. Use `tx` for every
 * write that must happen exactly once; do not COMMIT or ROLLBACK it yourself.
 * Throw to roll back (the record is retried, then handled by `onFailure`).
 */
export type EventHandler<P = unknown> = (tx: pg.PoolClient, event: ConsumedEvent<P>) => Promise<void>;

export type FailurePolicy = 'stop' | 'dead-letter';

export interface IdempotentConsumerOptions<P = unknown> {
  brokers: string[];
  groupId: string;
  /** Topic names or patterns (e.g. /^outbox\.event\./); patterns match topics that exist when the consumer starts. */
  topics: Array<string | RegExp>;
  /** A pg.Pool (yours; never ended by the consumer) or a connection string (the consumer owns that pool). */
  database: pg.Pool | string;
  handler: EventHandler<P>;
  /** Turns the parsed JSON payload into `P` (e.g. `(j) => schema.parse(j)`); a throw makes the record poison. */
  parsePayload?: (json: unknown, event: ConsumedEvent<unknown>) => P;
  /** Handler attempts per record before `onFailure` applies; default 5. */
  maxAttempts?: number;
  /** Exponential backoff with jitter between attempts; default 200 ms .. 10 s. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** After `maxAttempts` handler failures, or for a poison record: 'stop' (default) or 'dead-letter'. */
  onFailure?: FailurePolicy;
  /** Required with onFailure 'dead-letter'. */
  deadLetterTopic?: string;
  /** One transaction per up to `maxRecords` records of one partition, instead of one per record. */
  batch?: { maxRecords: number };
  /** Where a new group starts: true (default) = earliest, so events published before the first start are not missed. */
  fromBeginning?: boolean;
  /** Default `processed_messages` ("table" or "schema.table"). */
  processedTable?: string;
  /** Header that holds the outbox id; default `id`. */
  idHeader?: string;
  /** kafkajs partitionsConsumedConcurrently (each partition keeps its order); default 1. */
  partitionsConsumedConcurrently?: number;
  clientId?: string;
  /** Extra kafkajs client settings (ssl, sasl, timeouts, retry). */
  kafka?: Omit<KafkaConfig, 'brokers' | 'clientId' | 'logCreator'>;
  /** kafkajs consumer settings. maxWaitTimeInMs defaults to 1000 (kafkajs: 5000), which also bounds how long stop() waits for a fetch in flight. */
  consumer?: { sessionTimeout?: number; rebalanceTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number; maxBytesPerPartition?: number };
  /** Allow the dead-letter producer to create its topic; default true. */
  allowAutoTopicCreation?: boolean;
  /** pino logger; default silent. Payloads are never logged. */
  logger?: Logger;
}

export interface IdempotentConsumer {
  /** Connects, joins the group and starts consuming; resolves once running. */
  start(): Promise<void>;
  /** start(), then resolves when stop() finished, or rejects with the fatal error (e.g. a record failed maxAttempts times with onFailure 'stop'). */
  run(): Promise<void>;
  /** Graceful: lets the current record (or batch) finish and commit, then disconnects. Never rejects. */
  stop(): Promise<void>;
  readonly stats: Readonly<ConsumerStats>;
  readonly groupId: string;
}

export function createIdempotentConsumer<P = unknown>(options: IdempotentConsumerOptions<P>): IdempotentConsumer {
  return new IdempotentConsumerImpl<P>(validateOptions(options));
}

function invalid(message: string, hint?: string): OutboxTailError {
  return new OutboxTailError('CONFIG_INVALID', `createIdempotentConsumer: ${message}`, { exitCode: EXIT.CONFIG, ...(hint ? { hint } : {}) });
}

const positiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 1;

export function validateOptions<P>(options: IdempotentConsumerOptions<P>): IdempotentConsumerOptions<P> {
  if (!options || typeof options !== 'object') throw invalid('options are required');
  if (!Array.isArray(options.brokers) || options.brokers.length === 0 || options.brokers.some((b) => typeof b !== 'string' || b === '')) {
    throw invalid('brokers must be a non-empty list of host:port');
  }
  if (typeof options.groupId !== 'string' || options.groupId.trim() === '') throw invalid('groupId must be a non-empty string');
  if (!Array.isArray(options.topics) || options.topics.length === 0 || options.topics.some((t) => !(typeof t === 'string' && t !== '') && !(t instanceof RegExp))) {
    throw invalid('topics must be a non-empty list of topic names or RegExps');
  }
  const db = options.database as unknown;
  if (!(typeof db === 'string' && db !== '') && !(db && typeof db === 'object' && typeof (db as pg.Pool).connect === 'function')) {
    throw invalid('database must be a pg.Pool or a connection string');
  }
  if (typeof options.handler !== 'function') throw invalid('handler must be a function (tx, event) => Promise<void>');
  if (options.maxAttempts !== undefined && !positiveInt(options.maxAttempts)) throw invalid(`maxAttempts must be an integer >= 1, got ${options.maxAttempts}`);
  const onFailure = options.onFailure ?? 'stop';
  if (onFailure !== 'stop' && onFailure !== 'dead-letter') throw invalid(`onFailure must be 'stop' or 'dead-letter', got ${String(onFailure)}`);
  if (onFailure === 'dead-letter' && (typeof options.deadLetterTopic !== 'string' || !/^[A-Za-z0-9._-]{1,249}$/.test(options.deadLetterTopic))) {
    throw invalid('deadLetterTopic is required with onFailure "dead-letter" (Kafka topic names use A-Z a-z 0-9 . _ -)');
  }
  if (options.batch !== undefined && !positiveInt(options.batch?.maxRecords)) throw invalid('batch.maxRecords must be an integer >= 1');
  if (options.partitionsConsumedConcurrently !== undefined && !positiveInt(options.partitionsConsumedConcurrently)) {
    throw invalid('partitionsConsumedConcurrently must be an integer >= 1');
  }
  const b = options.backoff ?? {};
  for (const k of ['initialMs', 'maxMs'] as const) {
    const v = b[k];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) throw invalid(`backoff.${k} must be a number >= 0`);
  }
  quoteTableName(options.processedTable ?? DEFAULT_PROCESSED_TABLE);
  if (options.parsePayload !== undefined && typeof options.parsePayload !== 'function') throw invalid('parsePayload must be a function');
  return options;
}

type TxOutcome<P> =
  | { ok: true; applied: number; duplicates: number }
  /** The handler threw (or left the transaction aborted): counts against the record. */
  | { ok: false; kind: 'handler'; error: unknown; event: ConsumedEvent<P> | null }
  /** Connection lost, server shutting down, deadlock...: retried, not counted against the record. */
  | { ok: false; kind: 'transient'; error: unknown }
  /** The consumer's own statements failed for another reason (e.g. processed table missing). */
  | { ok: false; kind: 'database'; error: unknown };

type Settled = 'done' | 'halt';

/** What one kafkajs eachBatch call lets us do for its partition. */
interface PartitionContext {
  topic: string;
  partition: number;
  /** Commits offset + 1 (only ever called after the record's DB transaction committed). */
  commit(offset: string): Promise<void>;
  /** Sleeps, heartbeating; returns early on stop. */
  sleep(ms: number): Promise<void>;
  halted(): boolean;
}

interface Failure {
  id: string | null;
  reason: string;
  cause: unknown;
  attempts: number;
  kind: 'handler' | 'poison';
  key: string | null;
  topic: string;
  partition: number;
  offset: string;
  eventType?: string | undefined;
  aggregateType?: string | undefined;
  aggregateId?: string | undefined;
}

class IdempotentConsumerImpl<P> implements IdempotentConsumer {
  readonly stats = new ConsumerStats();
  readonly groupId: string;
  private readonly kafka: Kafka;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly log: Logger;
  private readonly insertSql: string;
  private readonly maxAttempts: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly onFailure: FailurePolicy;
  private readonly batchSize: number;
  private consumer: Consumer | null = null;
  private producer: Producer | null = null;
  private startPromise: Promise<void> | null = null;
  private shutdownPromise: Promise<void> | null = null;
  private stopping = false;
  private fatal: OutboxTailError | null = null;
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (error: unknown) => void;

  constructor(private readonly options: IdempotentConsumerOptions<P>) {
    this.groupId = options.groupId;
    this.log = (options.logger ?? pino({ level: 'silent' })).child({ component: 'consumer', groupId: options.groupId });
    this.maxAttempts = options.maxAttempts ?? 5;
    this.backoffInitialMs = options.backoff?.initialMs ?? 200;
    this.backoffMaxMs = Math.max(this.backoffInitialMs, options.backoff?.maxMs ?? 10_000);
    this.onFailure = options.onFailure ?? 'stop';
    this.batchSize = options.batch?.maxRecords ?? 1;
    this.insertSql = insertProcessedSql(options.processedTable ?? DEFAULT_PROCESSED_TABLE);
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined); // run() hands it out; nobody awaiting it is not an unhandled rejection

    if (typeof options.database === 'string') {
      this.pool = new pg.Pool({
        connectionString: options.database,
        max: (options.partitionsConsumedConcurrently ?? 1) + 1,
        application_name: 'outbox-tail-consumer',
        keepAlive: true,
      });
      // An idle client that loses its connection must not crash the process; the next checkout reconnects.
      this.pool.on('error', (error) => this.log.warn({ err: errorMessage(error) }, 'idle database connection failed'));
      this.ownsPool = true;
    } else {
      this.pool = options.database;
      this.ownsPool = false;
    }

    const kafkaLog = this.log.child({ component: 'kafkajs' });
    this.kafka = new Kafka({
      ...options.kafka,
      clientId: options.clientId ?? `outbox-tail-consumer-${options.groupId}`,
      brokers: options.brokers,
      logLevel: options.kafka?.logLevel ?? KafkaLogLevel.WARN,
      logCreator: () => ({ namespace, level, log: entry }) => {
        const { message, timestamp: _t, logger: _l, ...extra } = entry;
        const line = { kafkajs: namespace, ...extra };
        if (level <= KafkaLogLevel.ERROR) kafkaLog.error(line, message);
        else if (level === KafkaLogLevel.WARN) kafkaLog.warn(line, message);
        else kafkaLog.debug(line, message);
      },
    });
  }

  start(): Promise<void> {
    this.startPromise ??= this.doStart();
    return this.startPromise;
  }

  async run(): Promise<void> {
    await this.start();
    return this.done;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    if (this.startPromise) await this.startPromise.catch(() => undefined);
    await this.shutdown();
  }

  private async doStart(): Promise<void> {
    if (this.stopping) throw new OutboxTailError('CONFIG_INVALID', 'the consumer was stopped; create a new one to start again');
    this.stats.state = 'starting';
    const o = this.options;
    try {
      const consumer = this.kafka.consumer({ groupId: o.groupId, maxWaitTimeInMs: 1_000, ...o.consumer });
      this.consumer = consumer;
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) {
          this.log.warn({ err: errorMessage(payload.error) }, 'kafka consumer crashed; kafkajs restarts it');
        } else {
          this.fail(classifyKafkaError(payload.error, 'the kafka consumer crashed and will not restart'));
        }
      });
      await consumer.connect();
      await consumer.subscribe({ topics: o.topics, fromBeginning: o.fromBeginning ?? true });
      if (this.onFailure === 'dead-letter') {
        this.producer = this.kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: o.allowAutoTopicCreation ?? true,
          createPartitioner: Partitioners.DefaultPartitioner,
        });
        await this.producer.connect();
      }
      await consumer.run({
        autoCommit: false, // offsets are committed by hand, each only after its DB transaction committed
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: o.partitionsConsumedConcurrently ?? 1,
        eachBatch: (payload) => this.onBatch(payload),
      });
    } catch (error) {
      const e = classifyKafkaError(error, `starting consumer group ${o.groupId}`);
      this.fail(e);
      await this.shutdown();
      throw e;
    }
    if (this.fatal) throw this.fatal;
    if (!this.stopping) this.stats.state = 'running';
  }

  /** Records the first fatal error and starts the shutdown (never awaited from inside eachBatch: disconnect waits for it). */
  private fail(error: OutboxTailError): void {
    if (this.fatal) return;
    this.fatal = error;
    this.log.error({ code: error.code, err: error.message }, 'consumer stops on a fatal error');
    this.abort.abort();
    setImmediate(() => void this.shutdown());
  }

  private shutdown(): Promise<void> {
    this.shutdownPromise ??= (async () => {
      if (!this.fatal) this.stats.state = 'stopping';
      this.abort.abort();
      // kafkajs waits for the running eachBatch (the current record or batch) before leaving the group.
      await this.consumer?.disconnect().catch((error: unknown) => this.log.warn({ err: errorMessage(error) }, 'disconnecting the kafka consumer'));
      await this.producer?.disconnect().catch((error: unknown) => this.log.warn({ err: errorMessage(error) }, 'disconnecting the dead-letter producer'));
      if (this.ownsPool) await this.pool.end().catch((error: unknown) => this.log.warn({ err: errorMessage(error) }, 'closing the database pool'));
      if (this.fatal) {
        this.stats.state = 'failed';
        this.rejectDone(this.fatal);
      } else {
        this.stats.state = 'stopped';
        this.resolveDone();
      }
    })();
    return this.shutdownPromise;
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    const { topic, partition } = batch;
    const ctx: PartitionContext = {
      topic,
      partition,
      halted: () => this.stopping || this.fatal !== null || !isRunning() || isStale(),
      commit: async (offset) => {
        // Explicit offsets: committed now, whatever autoCommit says, also while kafkajs is stopping
        // (consumer.commitOffsets() would silently skip the commit once stop() began).
        await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(offset) + 1n).toString() }] }] });
        this.stats.offsetCommits += 1;
        resolveOffset(offset);
      },
      sleep: async (ms) => {
        const until = Date.now() + ms;
        while (!this.abort.signal.aborted && Date.now() < until) {
          await delay(Math.min(1_000, until - Date.now()), undefined, { signal: this.abort.signal }).catch(() => undefined);
          await heartbeat();
        }
      },
    };
    const messages = batch.messages;
    for (let i = 0; i < messages.length; i += this.batchSize) {
      if (ctx.halted()) return;
      const chunk = messages.slice(i, i + this.batchSize).map((m) => this.decode(topic, partition, m));
      if ((await this.processChunk(chunk, ctx)) === 'halt') return;
      await heartbeat();
    }
  }

  private decode(topic: string, partition: number, message: EachBatchPayload['batch']['messages'][number]): DecodeResult<P> {
    return decodeRecord<P>(topic, partition, message, { idHeader: this.options.idHeader, parsePayload: this.options.parsePayload });
  }

  private async processChunk(chunk: DecodeResult<P>[], ctx: PartitionContext): Promise<Settled> {
    if (chunk.length > 1 && chunk.every((d) => d.ok)) {
      const events = chunk.map((d) => (d as { ok: true; event: ConsumedEvent<P> }).event);
      const out = await this.runTransaction(events);
      if (out.ok) {
        this.stats.processed += out.applied;
        this.stats.duplicatesSkipped += out.duplicates;
        await ctx.commit(events[events.length - 1]!.offset);
        return 'done';
      }
      if (out.kind === 'handler') this.stats.handlerFailures += 1;
      else if (out.kind === 'transient') this.stats.transientRetries += 1;
      this.log.warn(
        { topic: ctx.topic, partition: ctx.partition, fromOffset: events[0]!.offset, records: events.length, outboxId: out.kind === 'handler' ? out.event?.id : undefined, err: errorMessage(out.error) },
        'batch transaction failed and was rolled back; applying its records one transaction each',
      );
    }
    // One record per transaction: a batch with a poison record, a failed batch, or batch mode off.
    for (const d of chunk) {
      if (ctx.halted()) return 'halt';
      if ((await this.processOne(d, ctx)) === 'halt') return 'halt';
    }
    return 'done';
  }

  private async processOne(d: DecodeResult<P>, ctx: PartitionContext): Promise<Settled> {
    if (!d.ok) {
      this.stats.poisonRecords += 1;
      const p = d.poison;
      this.log.error({ topic: p.topic, partition: p.partition, offset: p.offset, outboxId: p.id ?? undefined, reason: p.reason }, 'poison record');
      // Deterministic: retrying cannot help, so the failure policy applies at once.
      return this.onExhausted({ id: p.id, reason: p.reason, cause: undefined, attempts: 1, kind: 'poison', key: p.key, topic: p.topic, partition: p.partition, offset: p.offset }, ctx);
    }
    const event = d.event;
    let handlerFailures = 0;
    let databaseFailures = 0;
    let transient = 0;
    for (;;) {
      if (ctx.halted()) return 'halt';
      const out = await this.runTransaction([event]);
      if (out.ok) {
        this.stats.processed += out.applied;
        this.stats.duplicatesSkipped += out.duplicates;
        await ctx.commit(event.offset);
        return 'done';
      }
      const where = { topic: event.topic, partition: event.partition, offset: event.offset, outboxId: event.id, err: errorMessage(out.error) };
      if (out.kind === 'handler') {
        this.stats.handlerFailures += 1;
        handlerFailures += 1;
        this.log.warn({ ...where, attempt: handlerFailures, maxAttempts: this.maxAttempts }, 'handler failed; transaction rolled back');
        if (handlerFailures >= this.maxAttempts) {
          return this.onExhausted(
            {
              id: event.id,
              reason: `handler failed ${handlerFailures} time(s): ${errorMessage(out.error)}`,
              cause: out.error,
              attempts: handlerFailures,
              kind: 'handler',
              key: event.key,
              topic: event.topic,
              partition: event.partition,
              offset: event.offset,
              eventType: event.eventType,
              aggregateType: event.aggregateType,
              aggregateId: event.aggregateId,
            },
            ctx,
          );
        }
        await ctx.sleep(this.delay(handlerFailures));
      } else if (out.kind === 'transient') {
        // A database outage must not use up the record's attempts (nor dead-letter healthy records): retry until it heals or stop().
        this.stats.transientRetries += 1;
        transient += 1;
        this.log.warn({ ...where, retry: transient }, 'transient database error; retrying the record');
        await ctx.sleep(this.delay(Math.min(transient, 20)));
      } else {
        databaseFailures += 1;
        this.log.warn({ ...where, attempt: databaseFailures }, 'database error in the consumer transaction');
        if (databaseFailures >= this.maxAttempts) {
          this.fail(
            new OutboxTailError('PG_ERROR', `consumer group ${this.groupId}: the transaction for outbox id ${event.id} (${event.topic}/${event.partition}@${event.offset}) failed ${databaseFailures} time(s): ${errorMessage(out.error)}`, {
              cause: out.error,
              hint: `check that the ${this.options.processedTable ?? DEFAULT_PROCESSED_TABLE} table exists (migrations/0002_processed_messages.sql) and the role may write it`,
            }),
          );
          return 'halt';
        }
        await ctx.sleep(this.delay(databaseFailures));
      }
    }
  }

  private delay(attempt: number): number {
    return backoffDelay(attempt, this.backoffInitialMs, this.backoffMaxMs);
  }

  /** The record failed for good: stop, or dead-letter it, mark its id processed and commit its offset. */
  private async onExhausted(f: Failure, ctx: PartitionContext): Promise<Settled> {
    const at = `${f.topic}/${f.partition}@${f.offset}`;
    if (this.onFailure === 'stop') {
      const message =
        f.kind === 'poison'
          ? `consumer group ${this.groupId}: poison record at ${at}: ${f.reason}`
          : `consumer group ${this.groupId}: outbox id ${f.id} at ${at}: ${f.reason}`;
      this.fail(
        f.kind === 'poison'
          ? new OutboxTailError('CONSUMER_POISON_RECORD', message, { exitCode: EXIT.BAD_INPUT, hint: 'fix or remove the record, or run with onFailure "dead-letter"' })
          : new OutboxTailError('CONSUMER_HANDLER_FAILED', message, { cause: f.cause, hint: 'fix the handler or the data it needs and restart; its offset was not committed, so the record is retried' }),
      );
      return 'halt';
    }

    const message = buildDeadLetterMessage({
      id: f.id,
      error: f.kind === 'poison' ? `poison: ${f.reason}` : f.reason,
      consumerGroup: this.groupId,
      topic: f.topic,
      partition: f.partition,
      offset: f.offset,
      key: f.key,
      attempts: f.attempts,
      eventType: f.eventType,
      aggregateType: f.aggregateType,
      aggregateId: f.aggregateId,
    });
    // 1. publish (acks=all) first: a crash before the next steps only repeats the dead letter, never loses it.
    // A stop() during these steps still finishes them; only retries after a failure give way to it.
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 && this.abort.signal.aborted) return 'halt';
      try {
        await this.producer!.send({ topic: this.options.deadLetterTopic!, acks: -1, messages: [message] });
        break;
      } catch (error) {
        const e = classifyKafkaError(error, `dead-lettering ${at} to ${this.options.deadLetterTopic}`);
        this.log.warn({ code: e.code, err: e.message, attempt }, 'publishing the dead letter failed');
        if (!e.retriable || attempt >= this.maxAttempts) {
          this.fail(e);
          return 'halt';
        }
        await ctx.sleep(this.delay(attempt));
      }
    }
    // 2. mark the id processed, so replays of it are skipped as duplicates.
    if (f.id !== null) {
      for (let attempt = 1; ; attempt++) {
        if (attempt > 1 && this.abort.signal.aborted) return 'halt';
        try {
          await this.pool.query(this.insertSql, [this.groupId, [f.id]]);
          break;
        } catch (error) {
          this.log.warn({ err: errorMessage(error), attempt }, 'recording the dead-lettered id as processed failed');
          if (!isTransientPgError(error) && attempt >= this.maxAttempts) {
            this.fail(new OutboxTailError('PG_ERROR', `recording dead-lettered outbox id ${f.id} as processed: ${errorMessage(error)}`, { cause: error }));
            return 'halt';
          }
          await ctx.sleep(this.delay(Math.min(attempt, 20)));
        }
      }
    }
    this.stats.deadLettered += 1;
    this.log.warn({ topic: f.topic, partition: f.partition, offset: f.offset, outboxId: f.id ?? undefined, deadLetterTopic: this.options.deadLetterTopic }, 'record dead-lettered');
    // 3. only now move the offset past it.
    await ctx.commit(f.offset);
    return 'done';
  }

  /**
   * One PostgreSQL transaction: insert every id into processed_messages (a
   * conflict = already applied), run the handler for each new one, COMMIT.
   */
  private async runTransaction(events: ConsumedEvent<P>[]): Promise<TxOutcome<P>> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      return { ok: false, kind: isTransientPgError(error) ? 'transient' : 'database', error };
    }
    let connectionError: unknown = null;
    const onError = (error: unknown): void => {
      connectionError = error;
    };
    client.on('error', onError);
    let current: ConsumedEvent<P> | null = null;
    let committing = false;
    let outcome: TxOutcome<P>;
    let destroy = false;
    try {
      await client.query('begin');
      const inserted = await client.query<{ message_id: string }>(this.insertSql, [this.groupId, events.map((e) => e.id)]);
      const fresh = new Set(inserted.rows.map((r) => r.message_id));
      let applied = 0;
      let duplicates = 0;
      for (const event of events) {
        // delete(): a second copy of the same id in this batch is a duplicate too.
        if (!fresh.delete(event.id)) {
          duplicates += 1;
          continue;
        }
        current = event;
        await this.options.handler(client, event);
        current = null;
        applied += 1;
      }
      committing = true;
      const result = await client.query('commit');
      if (result.command !== 'COMMIT') {
        // PostgreSQL answers COMMIT of an aborted transaction with ROLLBACK: a statement failed
        // inside the handler and the handler swallowed the error. Nothing was applied.
        outcome = {
          ok: false,
          kind: 'handler',
          error: new OutboxTailError('PG_ERROR', 'a statement failed inside the handler and the handler caught the error; the transaction was aborted and rolled back'),
          event: events.length === 1 ? events[0]! : null,
        };
      } else {
        outcome = { ok: true, applied, duplicates };
      }
    } catch (error) {
      const transient = connectionError !== null || isTransientPgError(error);
      if (committing) {
        destroy = true; // COMMIT failed: the outcome is unknown, the retry finds out (a committed id is a duplicate)
      } else {
        try {
          await client.query('rollback');
        } catch {
          destroy = true;
        }
      }
      if (transient) {
        destroy = true;
        outcome = { ok: false, kind: 'transient', error: connectionError ?? error };
      } else if (current !== null || committing) {
        // Thrown by the handler, or by COMMIT (a deferred constraint the handler's writes broke).
        outcome = { ok: false, kind: 'handler', error, event: current ?? (events.length === 1 ? events[0]! : null) };
      } else {
        outcome = { ok: false, kind: 'database', error };
      }
    } finally {
      client.off('error', onError);
    }
    client.release(destroy || connectionError !== null ? true : undefined);
    return outcome;
  }
}
