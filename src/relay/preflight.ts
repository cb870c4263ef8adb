import type pg from 'pg';
import type { Logger } from 'pino';
import { EXIT, OutboxTailError, type ErrorCode } from '../shared/outbox-tail-error.js';
import { columnMapping, REQUIRED_COLUMNS, type ColumnSettings } from '../pipeline/assemble/outbox-columns.js';
import { splitTable } from '../postgres/qualified-table.js';
import { describeTarget } from '../postgres/describe-target.js';
import { classifyPgError, STANDBY_HINT } from '../postgres/pg-errors.js';
import type { PgSettings } from '../postgres/pg-connection.js';
import { withPgClient } from '../postgres/with-pg-client.js';
import type { Sink } from '../sink/sink.js';
import { parseShard } from '../shared/shard-spec.js';
import { checkShardFilter, requireRowFilters } from '../postgres/shard-check.js';
import { createSlot, readSlot } from '../postgres/slots/slot-catalog.js';
import { describeInvalidation, type InvalidationCause } from '../postgres/slots/invalidation-cause.js';
import { standbyDecodingVerdict } from '../postgres/standby-decoding.js';
import { warnOnMissingStandbySlots } from '../postgres/slots/standby-slots-check.js';

/** What preflight checks: the connection, the table and its columns, the publication, the slot (--create-slot, --failover-slot). */
export interface PreflightSettings extends PgSettings, ColumnSettings {
  slot: string;
  publication: string;
  source: 'table' | 'messages' | 'both';
  table: string;
  createSlot: boolean;
  failoverSlot: boolean;
  /** --shard i/N: the publication's row filter must select that shard. */
  shard?: string | undefined;
  /** --primary-url on a hot standby: asked for a running-xacts record while --create-slot waits for one. */
  primary?: PgSettings | null;
  /** A standby cannot write heartbeats: without --primary-url they fail, so preflight says so. */
  heartbeatIntervalMs?: number;
}

export interface PreflightResult {
  serverVersion: string;
  slotCreated: boolean;
}

export interface PreflightOptions {
  /**
   * Kafka is checked through the sink the relay will publish with (its
   * client, TLS and SASL settings); false skips Kafka.
   */
  kafka: Pick<Sink, 'metadata'> | false;
}

const fail = (code: ErrorCode, message: string, hint: string, exitCode: number = EXIT.PREFLIGHT) => new OutboxTailError(code, message, { hint, exitCode });

/**
 * Everything that must hold before streaming, checked in the order an
 * operator would fix it, each failure naming the fix.
 */
export async function preflight(config: PreflightSettings, logger: Logger, options: PreflightOptions): Promise<PreflightResult> {
  const log = logger.child({ component: 'preflight', slot: config.slot });
  const where = describeTarget(config);
  const result = await withPgClient(
    config,
    async (client) => {
      try {
        return await checkPostgres(client, config, log);
      } catch (error) {
        throw OutboxTailError.is(error) ? error : classifyPgError(error, `preflight on ${where}`).withExitCode(EXIT.PREFLIGHT);
      }
    },
    { connectExitCode: EXIT.PREFLIGHT },
  );
  const kafka = options.kafka === false ? null : await checkKafka(options.kafka);
  log.info(
    { event: 'preflight-ok', serverVersion: result.serverVersion, slotCreated: result.slotCreated, ...(kafka ? { kafkaBrokers: kafka.brokers } : {}) },
    'preflight passed',
  );
  return result;
}

async function checkPostgres(client: pg.Client, config: PreflightSettings, log: Logger): Promise<PreflightResult> {
  const where = describeTarget(config);
  const info = (
    await client.query<{ wal_level: string; can_replicate: boolean; version: string; version_num: number; db: string; user: string; in_recovery: boolean }>(
      `select current_setting('wal_level') as wal_level, current_setting('server_version') as version, current_setting('server_version_num')::int as version_num,
              current_database() as db, current_user as user, pg_is_in_recovery() as in_recovery,
              (select rolsuper or rolreplication from pg_roles where rolname = current_user) as can_replicate`,
    )
  ).rows[0]!;
  if (info.in_recovery) await checkStandbyDecoding(client, config, info.version_num, where, log);
  if (info.wal_level !== 'logical') {
    throw fail(
      'WAL_LEVEL_NOT_LOGICAL',
      `wal_level is '${info.wal_level}' on ${where}, logical replication needs 'logical'`,
      'set wal_level = logical in postgresql.conf (ALTER SYSTEM SET wal_level = logical) and restart PostgreSQL',
    );
  }
  if (!info.can_replicate) {
    throw fail('ROLE_CANNOT_REPLICATE', `role ${info.user} may not start replication`, `ALTER ROLE ${info.user} REPLICATION (see docker/least-privilege.sql)`);
  }
  if (config.source !== 'table' && info.version_num < 140000) {
    throw fail(
      'MESSAGES_UNSUPPORTED',
      `--source ${config.source} needs PostgreSQL 14 or later (pgoutput's messages option); ${where} runs ${info.version}`,
      'upgrade PostgreSQL, or write events to the outbox table and run with --source table',
    );
  }
  // --source messages reads no table; pgoutput still needs its publication to exist.
  const readsTable = config.source !== 'messages';
  const [schema, table] = splitTable(config.table);
  if (readsTable) {
    const columns = (
      await client.query<{ attname: string }>(
        `select a.attname from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = $1 and c.relname = $2 and a.attnum > 0 and not a.attisdropped`,
        [schema, table],
      )
    ).rows.map((r) => r.attname);
    if (columns.length === 0) {
      throw fail(
        'TABLE_MISSING',
        `outbox table ${config.table} does not exist in database ${info.db}`,
        'run `outbox-tail init` to create it, or point --table at your outbox table',
      );
    }
    const mapping = columnMapping(config);
    const missing = REQUIRED_COLUMNS.map((key) => mapping[key]).filter((c) => !columns.includes(c));
    if (missing.length > 0) {
      throw fail(
        'COLUMN_MISSING',
        `outbox table ${config.table} has no column(s) ${missing.join(', ')} (it has ${columns.join(', ')})`,
        'map your columns with --column-id, --column-aggregate-type, --column-aggregate-id, --column-event-type, --column-payload',
      );
    }
  }
  const publication = (await client.query<{ pubinsert: boolean }>('select pubinsert from pg_publication where pubname = $1', [config.publication])).rows[0];
  if (!publication) {
    throw fail(
      'PUBLICATION_MISSING',
      `publication ${config.publication} does not exist`,
      `CREATE PUBLICATION ${config.publication} FOR TABLE ${config.table} WITH (publish = 'insert'), or run \`outbox-tail init\``,
    );
  }
  if (readsTable) {
    const member = await client.query('select 1 from pg_publication_tables where pubname = $1 and schemaname = $2 and tablename = $3', [
      config.publication,
      schema,
      table,
    ]);
    if (member.rowCount === 0 || !publication.pubinsert) {
      throw fail(
        'PUBLICATION_WITHOUT_TABLE',
        `publication ${config.publication} does not publish INSERTs of ${config.table}`,
        `ALTER PUBLICATION ${config.publication} ADD TABLE ${config.table}; ALTER PUBLICATION ${config.publication} SET (publish = 'insert')`,
      );
    }
  }
  if (config.shard !== undefined && readsTable) {
    requireRowFilters(info.version_num, info.version, where);
    await checkShardFilter(client, {
      publication: config.publication,
      table: config.table,
      keyColumn: config.columnAggregateId,
      shard: parseShard(config.shard),
    });
  }
  const slotCreated = await checkSlot(client, config, info.db, info.in_recovery, log);
  await warnOnMissingStandbySlots(client, config.slot, log);
  return { serverVersion: info.version, slotCreated };
}

/** A server in recovery: decode there (16+, feedback through a physical slot), wait for its promotion, or refuse. */
async function checkStandbyDecoding(client: pg.Client, config: PreflightSettings, versionNum: number, where: string, log: Logger): Promise<void> {
  const facts = (
    await client.query<{ feedback: string; primary_slot: string | null; receiver: string | null; sync_slots: string | null }>(
      `select current_setting('hot_standby_feedback') as feedback, current_setting('primary_slot_name', true) as primary_slot,
              current_setting('sync_replication_slots', true) as sync_slots, (select status from pg_stat_wal_receiver) as receiver`,
    )
  ).rows[0]!;
  const row = await readSlot(client, config.slot);
  const verdict = standbyDecodingVerdict({
    serverVersionNum: versionNum,
    hotStandbyFeedback: facts.feedback === 'on',
    primarySlotName: facts.primary_slot ?? '',
    receiverStatus: facts.receiver,
    slot: row ? { synced: row.synced } : null,
    syncReplicationSlots: facts.sync_slots === 'on',
    failoverSlot: config.failoverSlot,
  });
  if (verdict.kind === 'wait-for-promotion') {
    throw fail('SERVER_IS_STANDBY', `PostgreSQL at ${where} is a standby (in recovery): ${verdict.reason}`, STANDBY_HINT);
  }
  if (verdict.kind === 'refuse') throw fail('STANDBY_NOT_READY_FOR_DECODING', `PostgreSQL at ${where} is a standby: ${verdict.reason}`, verdict.fix);
  for (const warning of verdict.warnings) log.warn({ event: 'standby-receiver-not-streaming' }, warning);
  if ((config.heartbeatIntervalMs ?? 0) > 0 && !config.primary) {
    log.warn(
      { event: 'standby-heartbeat-needs-primary' },
      'heartbeats cannot be written on a standby (pg_logical_emit_message() fails during recovery): every one will fail and an idle slot will not advance; give --primary-url so they are written on the primary',
    );
  }
  log.info({ event: 'standby-decoding', where }, 'decoding on a hot standby: its slot, its WAL, the primary pays no walsender');
}

async function checkSlot(client: pg.Client, config: PreflightSettings, db: string, onStandby: boolean, log: Logger): Promise<boolean> {
  const { slot } = config;
  const row = await readSlot(client, slot);
  if (!row) {
    if (!config.createSlot) {
      throw fail(
        'SLOT_MISSING',
        `replication slot ${slot} does not exist`,
        `create it with \`outbox-tail init --slot ${slot}\` or run with --create-slot; if it existed before, it was dropped and events since then may be lost (docs/operations.md, Runbook)`,
      );
    }
    const created = await createStandbyAwareSlot(client, config, onStandby, log);
    if (created)
      log.warn(
        { event: 'slot-created', failover: config.failoverSlot },
        `created replication slot ${slot} (--create-slot${config.failoverSlot ? ', failover = true' : ''}): only changes from now on are relayed`,
      );
    return created;
  }
  if (row.slotType !== 'logical' || row.plugin !== 'pgoutput') {
    throw fail(
      'SLOT_WRONG_PLUGIN',
      `replication slot ${slot} is a ${row.slotType} slot with plugin ${row.plugin ?? 'none'}, not pgoutput`,
      'use a logical slot created with the pgoutput plugin',
    );
  }
  if (row.database !== db) {
    throw fail(
      'SLOT_WRONG_PLUGIN',
      `replication slot ${slot} belongs to database ${row.database}, not ${db}`,
      "connect to the slot's database with --database-url, or use another slot",
    );
  }
  if (row.invalidation) throw slotInvalidatedError(slot, row.invalidation);
  return false;
}

/**
 * On a standby, creating a slot waits for a running-xacts record from the primary: its bgwriter
 * writes one every 15 s only while the primary is busy, so an idle primary can keep us waiting
 * until its next checkpoint. With --primary-url we ask the primary for one while we wait.
 */
async function createStandbyAwareSlot(client: pg.Client, config: PreflightSettings, onStandby: boolean, log: Logger): Promise<boolean> {
  const where = describeTarget(config);
  if (!onStandby) return createSlot(client, config.slot, { failover: config.failoverSlot, where });
  if (!config.primary) {
    log.warn(
      { event: 'standby-slot-creation-waits' },
      `creating slot ${config.slot} on a hot standby waits for a running-xacts record from the primary (within 15 s on a busy primary, up to its next checkpoint on an idle one); give --primary-url so the relay asks the primary for one (pg_log_standby_snapshot())`,
    );
    return createSlot(client, config.slot, { failover: config.failoverSlot, where });
  }
  return withPgClient(config.primary, (primary) =>
    createSlot(client, config.slot, { failover: config.failoverSlot, where, nudge: () => primary.query('select pg_log_standby_snapshot()') }),
  );
}

/** SLOT_INVALIDATED (exit 4) naming PostgreSQL's cause and the setting to change, then the runbook. */
export function slotInvalidatedError(slot: string, cause: InvalidationCause, options: { cause?: unknown } = {}): OutboxTailError {
  return new OutboxTailError('SLOT_INVALIDATED', `${describeInvalidation(slot, cause)}; events since may be lost`, {
    hint: `${cause.fix}. Then recover: \`outbox-tail recover\` (or run with --on-slot-lost recover) creates a new slot and re-publishes from the outbox table (docs/operations.md, runbook "Slot invalidated")`,
    exitCode: EXIT.SLOT_LOST,
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/**
 * A SLOT_INVALIDATED raised mid-run (START_REPLICATION refused, SQLSTATE 55000) says only that
 * the slot is unusable: read PostgreSQL's cause of it over a normal connection and name it with the
 * fix. The original error is returned when the cause cannot be read.
 */
export async function explainSlotInvalidated(config: PgSettings & { slot: string }, error: OutboxTailError): Promise<OutboxTailError> {
  if (error.code !== 'SLOT_INVALIDATED') return error;
  try {
    const cause = (await withPgClient(config, (client) => readSlot(client, config.slot)))?.invalidation ?? null;
    return cause ? slotInvalidatedError(config.slot, cause, { cause: error }) : error;
  } catch {
    return error;
  }
}

async function checkKafka(sink: Pick<Sink, 'metadata'>) {
  try {
    return await sink.metadata();
  } catch (error) {
    if (OutboxTailError.is(error)) throw error.withExitCode(EXIT.PREFLIGHT);
    throw error;
  }
}
