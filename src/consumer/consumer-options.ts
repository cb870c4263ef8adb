import type { KafkaConfig } from 'kafkajs';
import type pg from 'pg';
import type { Logger } from 'pino';
import { MAX_TIMER_MS } from '../shared/max-timer-ms.js';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import type { SchemaRegistrySettings } from '../schema-registry/registry-client.js';
import type { ConsumedEvent } from './consumed-event.js';
import { DEFAULT_PROCESSED_TABLE } from './processed-messages.js';
import { quoteTableName } from './sql.js';

/**
 * Applies one event inside the consumer's transaction. Use `tx` for every
 * write that must happen exactly once; do not COMMIT or ROLLBACK it yourself.
 * Throw to roll back (the record is retried, then handled by `onFailure`).
 */
export type EventHandler<P = unknown> = (tx: pg.PoolClient, event: ConsumedEvent<P>) => Promise<void>;

export type FailurePolicy = 'stop' | 'dead-letter';

/**
 * The consumer's database, like the relay's --database-url-file, --pg-password-file,
 * --pg-password-command and --pg-auth rds-iam: each new connection of the pool reads
 * its password again, so a rotated secret or a fresh IAM token is used on reconnect.
 */
export interface ConsumerDatabase {
  /** postgres:// URL (its password is used unless a source below is given). */
  url?: string;
  /** A file holding the URL, read at every connection. */
  urlFile?: string;
  /** A file holding the password, read at every connection. */
  passwordFile?: string;
  /** A command (run with /bin/sh) whose output is the password, run at every connection. */
  passwordCommand?: string;
  /** 'rds-iam': an RDS/Aurora IAM token per connection (needs @aws-sdk/rds-signer and `ssl`). */
  auth?: 'password' | 'rds-iam';
  awsRegion?: string;
  /** node-postgres TLS settings. */
  ssl?: pg.PoolConfig['ssl'];
  /** Connection timeout (default 10 s); a password command must finish within it. */
  connectTimeoutMs?: number;
}

export interface IdempotentConsumerOptions<P = unknown> {
  brokers: string[];
  groupId: string;
  /** Topic names or patterns (e.g. /^outbox\.event\./); patterns match topics that exist when the consumer starts. */
  topics: Array<string | RegExp>;
  /**
   * A pg.Pool (yours; never ended by the consumer), a connection string, or a
   * connection whose password is read at every connection (the consumer owns
   * those pools).
   */
  database: pg.Pool | string | ConsumerDatabase;
  handler: EventHandler<P>;
  /** Turns the parsed JSON payload into `P` (e.g. `(j) => schema.parse(j)`); a throw makes the record poison. */
  parsePayload?: (json: unknown, event: ConsumedEvent<unknown>) => P;
  /**
   * Values written with --value-format avro|json-schema: decoded with the
   * schema their id names in this Confluent-compatible registry (the payload
   * is then the decoded value). Without it, values are parsed as JSON.
   */
  schemaRegistry?: SchemaRegistrySettings;
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

function invalid(message: string, hint?: string): OutboxTailError {
  return new OutboxTailError('CONFIG_INVALID', `createIdempotentConsumer: ${message}`, { exitCode: EXIT.CONFIG, ...(hint ? { hint } : {}) });
}

const positiveInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 1;

/** A delay, when given: a number 0..MAX_TIMER_MS (a Node timer above it fires after 1 ms). */
function checkMs(name: string, v: unknown): void {
  if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_TIMER_MS)) {
    throw invalid(`${name} must be a number of ms from 0 to ${MAX_TIMER_MS} (the longest Node timer), got ${String(v)}`);
  }
}

/** createIdempotentConsumer's checks, before anything connects: a bad option fails at construction, not at the first record. */
export function validateOptions<P>(options: IdempotentConsumerOptions<P>): IdempotentConsumerOptions<P> {
  if (!options || typeof options !== 'object') throw invalid('options are required');
  if (!Array.isArray(options.brokers) || options.brokers.length === 0 || options.brokers.some((b) => typeof b !== 'string' || b === '')) {
    throw invalid('brokers must be a non-empty list of host:port');
  }
  if (typeof options.groupId !== 'string' || options.groupId.trim() === '') throw invalid('groupId must be a non-empty string');
  if (
    !Array.isArray(options.topics) ||
    options.topics.length === 0 ||
    options.topics.some((t) => !(typeof t === 'string' && t !== '') && !(t instanceof RegExp))
  ) {
    throw invalid('topics must be a non-empty list of topic names or RegExps');
  }
  const db = options.database as unknown;
  const isPool = Boolean(db && typeof db === 'object' && typeof (db as pg.Pool).connect === 'function');
  const isConnection = Boolean(db && typeof db === 'object' && !isPool && ((db as ConsumerDatabase).url || (db as ConsumerDatabase).urlFile));
  if (!(typeof db === 'string' && db !== '') && !isPool && !isConnection) {
    throw invalid('database must be a pg.Pool, a connection string or { url | urlFile, passwordFile?, passwordCommand?, auth? }');
  }
  if (isConnection) {
    const c = db as ConsumerDatabase;
    const sources = [c.passwordFile && 'passwordFile', c.passwordCommand && 'passwordCommand', c.auth === 'rds-iam' && 'auth: rds-iam'].filter(Boolean);
    if (sources.length > 1) throw invalid(`database: give one password source, not ${sources.join(' and ')}`);
    if (c.auth === 'rds-iam' && !c.ssl) throw invalid('database: auth rds-iam requires TLS (ssl), as RDS does for IAM logins');
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
  for (const k of ['initialMs', 'maxMs'] as const) checkMs(`backoff.${k}`, b[k]);
  if (isConnection) checkMs('database.connectTimeoutMs', (db as ConsumerDatabase).connectTimeoutMs);
  const c = options.consumer ?? {};
  for (const k of ['sessionTimeout', 'rebalanceTimeout', 'heartbeatInterval', 'maxWaitTimeInMs'] as const) checkMs(`consumer.${k}`, c[k]);
  quoteTableName(options.processedTable ?? DEFAULT_PROCESSED_TABLE);
  if (options.parsePayload !== undefined && typeof options.parsePayload !== 'function') throw invalid('parsePayload must be a function');
  return options;
}
