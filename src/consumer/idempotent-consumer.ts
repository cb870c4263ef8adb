import { type Kafka, logLevel as KafkaLogLevel } from 'kafkajs';
import { createKafka } from '../kafka/kafkajs/create-kafka.js';
import { kafkajsLogCreator } from '../kafka/kafkajs/kafkajs-log-creator.js';
import pg from 'pg';
import { pgConnection } from '../postgres/pg-connection.js';
import { pino, type Logger } from 'pino';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { classifyKafkaError } from '../kafka/kafkajs/kafka-errors.js';
import { ClaimTransaction } from './claim-transaction.js';
import { errorMessage } from './consumer-errors.js';
import { validateOptions, type ConsumerDatabase, type IdempotentConsumerOptions } from './consumer-options.js';
import { ConsumerStats } from './consumer-stats.js';
import { FailurePolicyHandler } from './failure-policy-handler.js';
import { KafkaConsumeLoop } from './kafka-consume-loop.js';
import { DEFAULT_PROCESSED_TABLE } from './processed-messages.js';
import { RecordProcessor } from './record-processor.js';
import { RetrySchedule } from './retry-schedule.js';

// The options are this factory's signature: importers of the factory get their types from here.
export { type ConsumerDatabase, type EventHandler, type FailurePolicy, type IdempotentConsumerOptions } from './consumer-options.js';

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

/** kafkajs logs through the consumer's pino logger, at kafkajs's levels. */
function createKafkaClient(options: Pick<IdempotentConsumerOptions, 'kafka' | 'clientId' | 'groupId' | 'brokers'>, log: Logger): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return createKafka({
    ...options.kafka,
    clientId: options.clientId ?? `outbox-tail-consumer-${options.groupId}`,
    brokers: options.brokers,
    logLevel: options.kafka?.logLevel ?? KafkaLogLevel.WARN,
    logCreator: kafkajsLogCreator(kafkaLog),
  });
}

/**
 * The lifecycle (start, run, stop, the first fatal error) and the wiring:
 * Kafka loop -> record processor -> claim transaction, with the failure
 * policy for records that will not succeed. Each part gets `fail` and the
 * abort signal instead of a reference to this class.
 */
class IdempotentConsumerImpl<P> implements IdempotentConsumer {
  readonly stats = new ConsumerStats();
  readonly groupId: string;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly log: Logger;
  private readonly loop: KafkaConsumeLoop<P>;
  private readonly failures: FailurePolicyHandler;
  private startPromise: Promise<void> | null = null;
  private shutdownPromise: Promise<void> | null = null;
  private stopping = false;
  private fatal: OutboxTailError | null = null;
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (error: unknown) => void;

  constructor(options: IdempotentConsumerOptions<P>) {
    this.groupId = options.groupId;
    this.log = (options.logger ?? pino({ level: 'silent' })).child({ component: 'consumer', groupId: options.groupId });
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined); // run() hands it out; nobody awaiting it is not an unhandled rejection

    if (typeof options.database === 'string' || !isPool(options.database)) {
      this.pool = new pg.Pool({
        ...poolConnection(options.database),
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

    const kafka = createKafkaClient(options, this.log);
    const shared = { groupId: options.groupId, stats: this.stats, log: this.log, fail: (error: OutboxTailError) => this.fail(error) };
    const retry = new RetrySchedule(options);
    const claims = new ClaimTransaction<P>(this.pool, options.groupId, options.processedTable ?? DEFAULT_PROCESSED_TABLE, options.handler);
    this.failures = new FailurePolicyHandler(kafka, {
      ...shared,
      policy: options.onFailure ?? 'stop',
      deadLetterTopic: options.deadLetterTopic,
      allowAutoTopicCreation: options.allowAutoTopicCreation,
      claims,
      retry,
      signal: this.abort.signal,
    });
    const processor = new RecordProcessor<P>({ ...shared, claims, failures: this.failures, retry });
    this.loop = new KafkaConsumeLoop<P>(kafka, { ...options, ...shared, processor, signal: this.abort.signal });
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
    try {
      await this.loop.connect();
      await this.failures.connect();
      await this.loop.run();
    } catch (error) {
      const e = classifyKafkaError(error, `starting consumer group ${this.groupId}`);
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
      // The consumer first: it finishes the record in flight, which may still need the producer and the pool.
      await this.loop.disconnect();
      await this.failures.disconnect();
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
}

const isPool = (database: pg.Pool | ConsumerDatabase): database is pg.Pool => typeof (database as pg.Pool).connect === 'function';

/** A connection string as it is; a ConsumerDatabase as the relay builds its connections (the password read at every connection). */
function poolConnection(database: string | ConsumerDatabase): pg.PoolConfig {
  if (typeof database === 'string') return { connectionString: database };
  const config = pgConnection({
    databaseUrl: database.url,
    databaseUrlFile: database.urlFile,
    pgPasswordFile: database.passwordFile,
    pgPasswordCommand: database.passwordCommand,
    pgAuth: database.auth,
    awsRegion: database.awsRegion,
    connectTimeoutMs: database.connectTimeoutMs ?? 10_000,
  });
  return { ...config, ...(database.ssl !== undefined ? { ssl: database.ssl } : {}) } as pg.PoolConfig;
}
