/**
 * Every failure that crosses a role boundary is an OutboxTailError: a stable
 * `code` for logs, metrics and exit codes, and `retriable` so the relay decides
 * between "tear down and replay from the slot" and "halt and tell the operator".
 * Errors are classified where they enter (SQLSTATE, Kafka error types), never
 * by matching message text further down.
 */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'PG_UNREACHABLE'
  | 'PG_AUTH_FAILED'
  /** --pg-password-file/-command, --database-url-file or --pg-auth rds-iam gave no password at a connection (retried). */
  | 'PG_PASSWORD_UNAVAILABLE'
  | 'PG_TLS_FAILED'
  | 'PG_DATABASE_MISSING'
  | 'PG_ERROR'
  | 'WAL_LEVEL_NOT_LOGICAL'
  | 'ROLE_CANNOT_REPLICATE'
  | 'TABLE_MISSING'
  | 'COLUMN_MISSING'
  | 'PUBLICATION_MISSING'
  | 'PUBLICATION_WITHOUT_TABLE'
  | 'SLOT_MISSING'
  | 'SLOT_WRONG_PLUGIN'
  | 'SLOT_INVALIDATED'
  | 'SLOT_ACTIVE'
  /** The server is a standby (in recovery): its synced failover slots stream only after promotion. */
  | 'SERVER_IS_STANDBY'
  | 'STANDBY_NOT_READY_FOR_DECODING'
  | 'STANDBY_NEEDS_PRIMARY_URL'
  /** --failover-slot against a server older than PostgreSQL 17. */
  | 'FAILOVER_SLOT_UNSUPPORTED'
  /** --source messages|both against a server older than PostgreSQL 14 (pgoutput has no messages option). */
  | 'MESSAGES_UNSUPPORTED'
  /** Sharding the outbox table (init --shards, run --shard) against a server older than PostgreSQL 15 (no publication row filters). */
  | 'SHARDS_UNSUPPORTED'
  /** run --shard i/N: the shard's publication has no row filter, or one that selects another shard. */
  | 'SHARD_FILTER_MISMATCH'
  /** reshard: refused (exactly-once delivery, the table-less source) or a step that did not complete in time. */
  | 'RESHARD_REFUSED'
  | 'REPLICATION_STREAM_ERROR'
  | 'PROTOCOL_ERROR'
  | 'KAFKA_UNREACHABLE'
  | 'KAFKA_AUTH_FAILED'
  /** SASL/OAUTHBEARER: the token endpoint (or AWS, for MSK IAM) could not be asked for a token (retried). */
  | 'KAFKA_AUTH_UNAVAILABLE'
  | 'KAFKA_ERROR'
  | 'MESSAGE_TOO_LARGE'
  | 'MALFORMED_ROW'
  /** --source messages|both: a message with our prefix whose content is not a v1 outbox event. */
  | 'MALFORMED_MESSAGE'
  /** --source messages|both: a message with our prefix written with transactional = false (sent even if its transaction rolled back). */
  | 'NON_TRANSACTIONAL_MESSAGE'
  /** Exactly-once: the offsets topic is missing or not compacted. */
  | 'OFFSETS_TOPIC_INVALID'
  /** Exactly-once: the brokers cannot run transactions (no coordinator, ACLs, timeout above their maximum). */
  | 'KAFKA_TRANSACTIONS_UNAVAILABLE'
  /** Exactly-once: a newer producer with our transactional id took over; this relay must publish nothing more. */
  | 'KAFKA_PRODUCER_FENCED'
  /** Exactly-once: the slot was confirmed past the last published watermark (moved by someone else). */
  | 'WATERMARK_BEHIND_SLOT'
  /** Exactly-once: the transactional id already publishes for another slot. */
  | 'TRANSACTIONAL_ID_CONFLICT'
  /** Idempotent consumer, onFailure 'stop': the handler failed maxAttempts times for one record. */
  | 'CONSUMER_HANDLER_FAILED'
  /** Idempotent consumer, onFailure 'stop': a record that cannot be decoded (no id header, value not JSON, rejected by parsePayload). */
  | 'CONSUMER_POISON_RECORD'
  /** recover: the slot exists and is healthy; the relay resumes from it. */
  | 'SLOT_NOT_LOST'
  /** recover: no position recorded for the slot and no --since. */
  | 'POSITION_UNKNOWN'
  /** --value-format avro|json-schema: the schema registry cannot be reached, or answers 5xx (retried; nothing is confirmed past). */
  | 'SCHEMA_REGISTRY_UNREACHABLE'
  /** The schema registry refused our credentials (401/403). */
  | 'SCHEMA_REGISTRY_AUTH_FAILED'
  /** The schema registry has no such subject or schema id, or holds a schema we cannot compile. */
  | 'SCHEMA_NOT_FOUND'
  | 'SHUTDOWN_TIMEOUT';

/** Process exit codes, documented in docs/operations.md (Exit codes). */
export const EXIT = {
  OK: 0,
  FATAL: 1,
  CONFIG: 2,
  PREFLIGHT: 3,
  SLOT_LOST: 4,
  BAD_INPUT: 5,
  /** outbox-tail doctor: at least one check warns, none fails (0/1/2 as monitoring plugins count: ok/warning/critical). */
  DOCTOR_WARN: 1,
  /** outbox-tail doctor: at least one check fails; a config error (2) is a failure too. */
  DOCTOR_FAIL: 2,
} as const;

export class OutboxTailError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  /** What the operator should do about it; printed after the message. */
  readonly hint: string | undefined;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: { retriable?: boolean; hint?: string; cause?: unknown; exitCode?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OutboxTailError';
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? EXIT.FATAL;
  }

  /** The same error, ending the process with `exitCode` (a preflight failure exits 3 whatever its cause). */
  withExitCode(exitCode: number): OutboxTailError {
    return new OutboxTailError(this.code, this.message, { retriable: this.retriable, hint: this.hint, exitCode, cause: this.cause });
  }

  /** One line for humans: message, then the fix. */
  describe(): string {
    return this.hint ? `${this.message}. Fix: ${this.hint}` : this.message;
  }

  static is(error: unknown): error is OutboxTailError {
    return error instanceof OutboxTailError;
  }
}
