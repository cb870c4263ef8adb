import type { RelayConfig } from './config-schema.js';

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
  databaseUrl: {
    type: 'string',
    group: 'Source',
    describe: 'PostgreSQL URL; without it the libpq PG* variables apply',
    aliasesEnv: ['DATABASE_URL'],
    secret: true,
  },
  createSlot: { type: 'boolean', group: 'Source', describe: 'Create the slot if missing (default: a missing slot is an error)' },
  brokers: { type: 'array', group: 'Kafka', describe: 'Kafka bootstrap brokers, comma separated' },
  clientId: { type: 'string', group: 'Kafka', describe: 'Kafka client id' },
  topic: { type: 'string', group: 'Kafka', describe: 'Topic template: {aggregate_type}, {event_type}, {table}' },
  allowAutoTopicCreation: { type: 'boolean', group: 'Kafka', describe: 'Let the broker create missing topics (if the broker allows it)' },
  kafkaRetries: { type: 'number', group: 'Kafka', describe: 'Producer retries before the relay restarts from the slot' },
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
  onMalformed: { type: 'string', group: 'Bad input', choices: ['fail', 'dead-letter'], describe: 'A row with a mapped column NULL or missing' },
  deadLetterTopic: { type: 'string', group: 'Bad input', describe: 'Topic for dead-letter pointer records' },
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
};

export const optionKeys = Object.keys(OPTIONS) as OptionKey[];

export function flagName(key: OptionKey): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function envName(key: OptionKey): string {
  return `OUTBOX_TAIL_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
