import type { Options } from 'yargs';

/**
 * The subcommands and the options each takes besides the config options
 * (config-schema.ts): main.ts declares them to yargs from here and
 * docs/configuration.md (npm run docs) lists them from here, so each is
 * described once.
 */
export interface CommandSpec {
  /** The command's name (the first) and its aliases; `$0` makes it the default command. */
  names: readonly string[];
  describe: string;
  options: Readonly<Record<string, Options>>;
}

/** The config file flag every command takes; OUTBOX_TAIL_CONFIG is its env var. */
export const CONFIG_FILE_OPTION = {
  flag: 'config',
  env: 'OUTBOX_TAIL_CONFIG',
  options: { type: 'string', describe: 'JSON or YAML config file (keys: the option names, camelCase or kebab-case)', group: 'Config file:' },
} as const satisfies { flag: string; env: string; options: Options };

const json: Options = { type: 'boolean', describe: 'print one JSON object' };

/** --from and --to of the commands that work on a window of creation times (verify, replay). */
const timeWindow: Record<string, Options> = {
  from: { type: 'string', demandOption: true, describe: 'window start: a time with a zone (2026-12-01T12:00:00Z) or a span back from now (2h)' },
  to: { type: 'string', describe: 'window end, excluded [default: now]' },
};

export const COMMANDS = {
  run: { names: ['run', '$0'], describe: 'tail the slot and publish to Kafka (the daemon)', options: {} },
  init: { names: ['init'], describe: 'apply migrations/, create the publication and (with --slot) the slot if missing', options: {} },
  reshard: {
    names: ['reshard'],
    describe:
      'move a running sharded outbox from --from N to --to M shards without loss (at least once; docs/sharding.md): creates the new set, says when to stop the old relays and start the new, drops the old slots',
    options: {
      from: { type: 'number', demandOption: true, describe: 'the shards running now (N of --shard i/N)' },
      to: { type: 'number', demandOption: true, describe: 'the shards to move to' },
      'to-slot': { type: 'string', describe: 'base slot name of the new set [default: <slot>_n<to>]' },
      'to-publication': { type: 'string', describe: 'base publication name of the new set [default: <publication>_n<to>]' },
      'step-timeout-ms': { type: 'number', default: 600_000, describe: 'how long each wait may take before reshard gives up (nothing dropped)' },
      json,
    },
  },
  status: { names: ['status'], describe: 'slot and publication state, lag in bytes', options: { json } },
  verify: {
    names: ['verify'],
    describe: 'compare the outbox rows created in a window with the ids in Kafka; exit 1 when some are missing',
    options: {
      ...timeWindow,
      'kafka-margin-ms': {
        type: 'number',
        default: 300_000,
        describe: 'start reading Kafka this long before --from (record timestamps come from the relay host clock)',
      },
      list: { type: 'number', default: 10, describe: 'missing and unknown ids listed per topic' },
      json,
    },
  },
  replay: {
    names: ['replay'],
    describe: 'republish the outbox rows created in a window (duplicates possible, loss not); --only-missing sends what verify reports missing',
    options: {
      ...timeWindow,
      'only-missing': { type: 'boolean', describe: 'only rows whose id is not in Kafka (as verify reports them)' },
      'dry-run': { type: 'boolean', describe: 'select and count, publish nothing' },
      'kafka-margin-ms': { type: 'number', default: 300_000, describe: 'with --only-missing: start reading Kafka this long before --from' },
      'batch-size': { type: 'number', default: 1000, describe: 'rows fetched and published per Kafka request' },
      json,
    },
  },
  prune: {
    names: ['prune'],
    describe: 'delete outbox rows older than a retention window, in small batches, keeping rows the slot may not have passed',
    options: {
      'older-than': { type: 'string', demandOption: true, describe: 'retention window: rows created longer ago are deleted (7d, 12h, 90m)' },
      'batch-size': { type: 'number', default: 5000, describe: 'rows deleted per transaction' },
      'dry-run': { type: 'boolean', describe: 'count, delete nothing' },
      json,
    },
  },
  recover: {
    names: ['recover'],
    describe: 'after the slot was lost: create it anew and republish from the table every row since the recorded position',
    options: {
      since: { type: 'string', describe: 'backfill rows created since this time instead of the recorded position (a time with a zone, or 2h)' },
      margin: {
        type: 'string',
        describe: 'start this long before the recorded frontier commit time (1h, 30m): overrides --recover-margin-ms',
        deprecated: 'use --recover-margin-ms',
      },
      'dry-run': { type: 'boolean', describe: 'report what would be republished; leave the slot as it is' },
      'batch-size': { type: 'number', default: 1000, describe: 'rows fetched and published per Kafka request' },
      json,
    },
  },
  doctor: {
    names: ['doctor'],
    describe:
      'check the database and Kafka for what stalls, bloats or loses a slot: a table of ok/warn/fail, each with its fix; exit 0 all ok, 1 a warning, 2 a failure (docs/doctor.md)',
    options: {
      'max-downtime': { type: 'string', default: '1h', describe: 'the longest relay outage the slot must survive (sizes max_slot_wal_keep_size)' },
      'wal-sample': { type: 'string', default: '2s', describe: 'how long pg_current_wal_lsn() is sampled for the WAL rate' },
      'recovery-window': { type: 'string', default: '7d', describe: 'how long Kafka must keep records (topic retention.ms)' },
      'prune-older-than': { type: 'string', describe: "prune's --older-than, to check the outbox's oldest row against" },
      partitions: { type: 'number', describe: 'the partition count every outbox topic must have' },
      'standby-url': { type: 'string', describe: 'a standby to check for failover slots (sync_replication_slots) [env: OUTBOX_TAIL_STANDBY_URL]' },
      json: { type: 'boolean', describe: 'print one JSON object (its shape: docs/doctor.md)' },
    },
  },
} as const satisfies Record<string, CommandSpec>;
