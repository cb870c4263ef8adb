import type { RelayConfig } from './relay-config.js';

export type OptionKey = keyof RelayConfig;

export interface OptionSpec {
  type: 'string' | 'number' | 'boolean' | 'array';
  describe: string;
  group: string;
  choices?: readonly string[];
  /** Extra env var names, lower precedence than OUTBOX_TAIL_*. */
  aliasesEnv?: readonly string[];
  secret?: boolean;
}

/**
 * Names for every config key: the flag is the kebab-case key, the env var
 * OUTBOX_TAIL_ + its upper snake case. Help text lives here so `--help`, the
 * README and errors agree.
 */
export const OPTIONS: Record<OptionKey, OptionSpec> = {
  slot: { type: 'string', group: 'Source', describe: 'Logical replication slot to tail (pgoutput). Required for run.' },
  publication: { type: 'string', group: 'Source', describe: 'Publication containing the outbox table' },
  table: { type: 'string', group: 'Source', describe: 'Outbox table, "schema.table"' },
  source: {
    type: 'string',
    group: 'Source',
    choices: ['table', 'messages', 'both'],
    describe: 'Where events come from: outbox table INSERTs, transactional logical decoding messages with --message-prefix (outbox_tail.emit), or both',
  },
  messagePrefix: { type: 'string', group: 'Source', describe: 'Prefix of the logical decoding messages that carry outbox events (--source messages|both)' },
  heartbeatIntervalMs: {
    type: 'number',
    group: 'Source',
    describe:
      'Emit a non-transactional heartbeat message (prefix <message-prefix>-heartbeat) when nothing was streamed for this long, so the slot advances on a quiet database (0 = off)',
  },
  databaseUrl: {
    type: 'string',
    group: 'Source',
    describe: 'PostgreSQL URL; without it the libpq PG* variables apply',
    aliasesEnv: ['DATABASE_URL'],
    secret: true,
  },
  createSlot: { type: 'boolean', group: 'Source', describe: 'Create the slot if missing (default: a missing slot is an error)' },
  failoverSlot: {
    type: 'boolean',
    group: 'Source',
    describe: 'Create the slot (init, --create-slot) with failover = true, so standbys with sync_replication_slots = on keep it; PostgreSQL 17+ only',
  },
  brokers: { type: 'array', group: 'Kafka', describe: 'Kafka bootstrap brokers, comma separated' },
  clientId: { type: 'string', group: 'Kafka', describe: 'Kafka client id' },
  topic: { type: 'string', group: 'Kafka', describe: 'Topic template: {aggregate_type}, {event_type}, {table}' },
  recordHeaders: {
    type: 'array',
    group: 'Kafka',
    describe: 'Standard headers on every record, comma separated, id required (default all: id,event_type,aggregate_type,aggregate_id,created_at,commit_lsn)',
  },
  allowAutoTopicCreation: { type: 'boolean', group: 'Kafka', describe: 'Let the broker create missing topics (if the broker allows it)' },
  kafkaRetries: { type: 'number', group: 'Kafka', describe: 'Producer retries before the relay restarts from the slot' },
  kafkaRequestTimeoutMs: {
    type: 'number',
    group: 'Kafka',
    describe: 'A Kafka request unanswered this long fails and is retried; how soon a connection that went silent (network cut) is given up',
  },
  kafkaClient: {
    type: 'string',
    group: 'Kafka',
    choices: ['kafkajs', 'platformatic'],
    describe: 'Kafka client library of the producer: kafkajs, or @platformatic/kafka (less CPU per record, see the README Performance section)',
  },
  sinkThread: {
    type: 'string',
    group: 'Kafka',
    choices: ['main', 'worker'],
    describe: 'Where the Kafka client runs: main (one thread), or worker (a worker thread: a second core for Kafka encoding and I/O)',
  },
  delivery: {
    type: 'string',
    group: 'Delivery',
    choices: ['at-least-once', 'exactly-once'],
    describe: 'exactly-once: Kafka transactions with the slot position inside them; read_committed consumers see each outbox row once (kafkajs client only)',
  },
  transactionalId: { type: 'string', group: 'Delivery', describe: 'Kafka transactional.id in exactly-once mode (default outbox-tail-<slot>); one per slot' },
  offsetsTopic: {
    type: 'string',
    group: 'Delivery',
    describe: "Compacted topic holding each slot's watermark in exactly-once mode (outbox-tail init creates it)",
  },
  transactionTimeoutMs: {
    type: 'number',
    group: 'Delivery',
    describe:
      "Kafka transaction timeout in exactly-once mode: the longest a PostgreSQL transaction may take to publish (at most the broker's transaction.max.timeout.ms)",
  },
  transactionLanes: {
    type: 'number',
    group: 'Delivery',
    describe:
      "Transactional producers taking turns in exactly-once mode (ids <transactional-id>, <transactional-id>.2, ...): each Kafka transaction begins while the previous one's commit markers are still being written (1-4)",
  },
  columnId: { type: 'string', group: 'Columns', describe: 'Column holding the event id (uuid or text)' },
  columnAggregateType: { type: 'string', group: 'Columns', describe: 'Column holding the aggregate type (Debezium: aggregatetype)' },
  columnAggregateId: { type: 'string', group: 'Columns', describe: 'Column holding the aggregate id, used as Kafka key (Debezium: aggregateid)' },
  columnEventType: { type: 'string', group: 'Columns', describe: 'Column holding the event type (Debezium: type)' },
  columnPayload: { type: 'string', group: 'Columns', describe: 'Column holding the payload, forwarded byte for byte' },
  columnHeaders: { type: 'string', group: 'Columns', describe: 'Optional jsonb column whose string entries become Kafka headers' },
  columnCreatedAt: { type: 'string', group: 'Columns', describe: 'Optional column sent as the created_at header' },
  batchMaxMessages: { type: 'number', group: 'Batching', describe: 'Max records per Kafka request' },
  batchMaxBytes: { type: 'number', group: 'Batching', describe: "Max bytes per Kafka request (keep under the broker's max.message.bytes)" },
  batchMaxWaitMs: { type: 'number', group: 'Batching', describe: 'Wait this long for a batch to fill (0 = send when ready)' },
  maxInFlightMessages: { type: 'number', group: 'Batching', describe: 'Pause replication above this many unacknowledged records' },
  maxInFlightBytes: { type: 'number', group: 'Batching', describe: 'Pause replication above this many unacknowledged bytes' },
  onOversize: { type: 'string', group: 'Bad input', choices: ['fail', 'dead-letter'], describe: 'A record Kafka rejects as too large' },
  onMalformed: {
    type: 'string',
    group: 'Bad input',
    choices: ['fail', 'dead-letter'],
    describe: 'A row with a mapped column NULL or missing, a message whose content does not parse, a non-transactional message',
  },
  deadLetterTopic: { type: 'string', group: 'Bad input', describe: 'Topic for dead-letter pointer records' },
  onSlotLost: {
    type: 'string',
    group: 'Bad input',
    choices: ['halt', 'recover'],
    describe: 'A slot dropped or invalidated: halt (exit 4), or recreate it and backfill from the table since the recorded position (outbox-tail recover)',
  },
  recoverMarginMs: {
    type: 'number',
    group: 'Bad input',
    describe: 'recover: backfill from this long before the recorded position (the longest outbox transaction)',
  },
  logLevel: {
    type: 'string',
    group: 'Runtime',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    describe: 'Log level (JSON logs on stdout)',
  },
  statusIntervalMs: { type: 'number', group: 'Runtime', describe: 'Standby status update interval' },
  restartBackoffInitialMs: { type: 'number', group: 'Runtime', describe: 'First restart delay after a failure' },
  restartBackoffMaxMs: { type: 'number', group: 'Runtime', describe: 'Longest restart delay' },
  standbyRetryMs: { type: 'number', group: 'Runtime', describe: 'How often a standby retries a slot held by another relay' },
  shutdownTimeoutMs: { type: 'number', group: 'Runtime', describe: 'On SIGTERM, how long to wait for in-flight records' },
  connectTimeoutMs: { type: 'number', group: 'Runtime', describe: 'Connection timeout for PostgreSQL and Kafka' },
  replicationTimeoutMs: {
    type: 'number',
    group: 'Runtime',
    describe:
      "Reconnect when PostgreSQL sent nothing on the replication connection for this long (a keepalive is requested at half of it), like wal_receiver_timeout; keep it at least the server's wal_sender_timeout; 0 = never",
  },
  databaseUrlFile: { type: 'string', group: 'Source', describe: 'Read the PostgreSQL URL from this file (keeps the password out of argv and env)' },
  pgSslmode: {
    type: 'string',
    group: 'PostgreSQL TLS',
    choices: ['disable', 'require', 'verify-ca', 'verify-full'],
    describe: 'TLS to PostgreSQL (libpq meaning; overrides sslmode in the URL); verify-full checks the CA and the host name',
  },
  pgSslrootcert: { type: 'string', group: 'PostgreSQL TLS', describe: 'CA certificate file (PEM) the server certificate must chain to' },
  pgSslcert: { type: 'string', group: 'PostgreSQL TLS', describe: 'Client certificate file (PEM), with --pg-sslkey' },
  pgSslkey: { type: 'string', group: 'PostgreSQL TLS', describe: 'Client private key file (PEM)' },
  kafkaSsl: { type: 'boolean', group: 'Kafka security', describe: 'Connect to Kafka over TLS (SSL / SASL_SSL listeners); the host name is verified' },
  kafkaSslCa: { type: 'string', group: 'Kafka security', describe: 'CA certificate file (PEM) for the brokers (default: the system CAs)' },
  kafkaSslCert: { type: 'string', group: 'Kafka security', describe: 'Client certificate file (PEM) for mutual TLS, with --kafka-ssl-key' },
  kafkaSslKey: { type: 'string', group: 'Kafka security', describe: 'Client private key file (PEM)' },
  saslMechanism: {
    type: 'string',
    group: 'Kafka security',
    choices: ['plain', 'scram-sha-256', 'scram-sha-512'],
    describe: 'SASL mechanism (use with --kafka-ssl: PLAIN sends the password in clear)',
  },
  saslUsername: { type: 'string', group: 'Kafka security', describe: 'SASL user name' },
  saslPassword: {
    type: 'string',
    group: 'Kafka security',
    describe: 'SASL password (prefer --sasl-password-file or the env var: argv is visible in ps)',
    secret: true,
  },
  saslPasswordFile: { type: 'string', group: 'Kafka security', describe: 'Read the SASL password from this file' },
  metricsListen: { type: 'string', group: 'Observability', describe: 'Address of the /metrics, /healthz and /readyz HTTP endpoint, host:port, or off' },
  stallTimeoutMs: { type: 'number', group: 'Observability', describe: 'How long without a confirm while the slot lag grows before /healthz reports a stall' },
  slotPollIntervalMs: { type: 'number', group: 'Observability', describe: 'How often slot lag and wal_status are read from pg_replication_slots' },
};

export const optionKeys = Object.keys(OPTIONS) as OptionKey[];

export interface DeprecatedOption {
  /** The option that replaces it; a value given under the old name is converted into it. */
  replacement: OptionKey;
  convert(value: unknown): unknown;
  spec: OptionSpec;
}

/** Seconds (a number, or digits in a string) to milliseconds; anything else passes through for the schema to reject. */
function secondsToMs(value: unknown): unknown {
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : value;
}

/**
 * Old names that still work, converted into their replacement, with a
 * warning. Every duration is in milliseconds; --stall-timeout was in seconds.
 */
export const DEPRECATED_OPTIONS = {
  stallTimeout: {
    replacement: 'stallTimeoutMs',
    convert: secondsToMs,
    spec: { type: 'number', group: 'Observability', describe: 'Deprecated, in seconds: use --stall-timeout-ms' },
  },
} as const satisfies Record<string, DeprecatedOption>;

export type DeprecatedKey = keyof typeof DEPRECATED_OPTIONS;
export const deprecatedKeys = Object.keys(DEPRECATED_OPTIONS) as DeprecatedKey[];

export function flagName(key: OptionKey | DeprecatedKey): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function envName(key: OptionKey | DeprecatedKey): string {
  return `OUTBOX_TAIL_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
