import pg from 'pg';
import { readSlotStatus } from '../../postgres/slots/slot-status.js';
import { readSlot, readSlots } from '../../postgres/slots/slot-catalog.js';
import type { DoctorSettings } from './doctor-settings.js';
import { splitTable } from '../../postgres/qualified-table.js';
import { pgConnection } from '../../postgres/pg-connection.js';
import type { PostgresFacts, StandbyFacts, WalRate } from './doctor-facts.js';

const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1024, '8kB': 8192, MB: 1024 ** 2, GB: 1024 ** 3 };
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, min: 60, h: 3600, d: 86_400 };

/** How many of the newest outbox rows are read for the topic template's values. */
const TEMPLATE_SAMPLE_ROWS = 10_000;

/** Reads every PostgreSQL fact the doctor's checks need, over one normal connection. */
export async function gatherPostgresFacts(client: pg.Client, config: DoctorSettings, walSampleMs: number): Promise<PostgresFacts> {
  const info = (
    await client.query<{
      version: string;
      num: number;
      db: string;
      usr: string;
      rec: boolean;
      wal_level: string;
      superuser: boolean;
      replication: boolean;
      sss: string | null;
      emit: boolean;
    }>(
      `select current_setting('server_version') as version, current_setting('server_version_num')::int as num, current_database() as db,
              current_user as usr, pg_is_in_recovery() as rec, current_setting('wal_level') as wal_level,
              r.rolsuper as superuser, r.rolreplication as replication,
              current_setting('synchronized_standby_slots', true) as sss,
              -- PostgreSQL 17 added a 4th argument (flush): whichever signature the server has
              (select coalesce(bool_or(has_function_privilege(p.oid, 'EXECUTE')), false) from pg_proc p
                where p.proname = 'pg_logical_emit_message' and p.proargtypes[2] = 'text'::regtype) as emit
         from pg_roles r where r.rolname = current_user`,
    )
  ).rows[0]!;
  const settings = new Map(
    (
      await client.query<{ name: string; setting: string; unit: string | null }>(
        `select name, setting, unit from pg_settings where name in ('max_slot_wal_keep_size', 'idle_replication_slot_timeout')`,
      )
    ).rows.map((r) => [r.name, r]),
  );
  const ssl = (
    await client.query<{ ssl: boolean; version: string | null; cipher: string | null }>(
      'select ssl, version, cipher from pg_stat_ssl where pid = pg_backend_pid()',
    )
  ).rows[0];
  const keep = settings.get('max_slot_wal_keep_size');
  const idle = settings.get('idle_replication_slot_timeout');
  const keepValue = keep ? Number(keep.setting) : -1;
  const [schema, table] = splitTable(config.table);
  const qualified = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(table)}`;
  const privileges = (
    await client.query<{ select_outbox: boolean | null; write_position: boolean | null }>(
      `select case when to_regclass($1) is null then null else has_table_privilege(to_regclass($1), 'SELECT') end as select_outbox,
              case when to_regclass('outbox_tail_relay_position') is null then null
                   else has_table_privilege('outbox_tail_relay_position', 'SELECT') and has_table_privilege('outbox_tail_relay_position', 'INSERT')
                        and has_table_privilege('outbox_tail_relay_position', 'UPDATE') end as write_position`,
      [qualified],
    )
  ).rows[0]!;
  const slot = await readSlotStatus(client, config.slot, config.publication, { table: config.table, createdAtColumn: config.columnCreatedAt });
  const standby = info.rec
    ? (
        await client.query<{ feedback: string; primary_slot: string | null; sync_slots: string | null; receiver: string | null }>(
          `select current_setting('hot_standby_feedback') as feedback, current_setting('primary_slot_name', true) as primary_slot,
                  current_setting('sync_replication_slots', true) as sync_slots, (select status from pg_stat_wal_receiver) as receiver`,
        )
      ).rows[0]!
    : null;
  const pub = (
    await client.query<{ pubinsert: boolean; pubupdate: boolean; pubdelete: boolean; pubtruncate: boolean }>(
      'select pubinsert, pubupdate, pubdelete, pubtruncate from pg_publication where pubname = $1',
      [config.publication],
    )
  ).rows[0];
  return {
    serverVersion: info.version,
    serverVersionNum: info.num,
    database: info.db,
    user: info.usr,
    inRecovery: info.rec,
    standbyDecoding: standby
      ? {
          hotStandbyFeedback: standby.feedback === 'on',
          primarySlotName: standby.primary_slot ?? '',
          syncReplicationSlots: standby.sync_slots === 'on',
          receiverStatus: standby.receiver,
        }
      : null,
    walLevel: info.wal_level,
    host: client.host,
    tls: ssl?.ssl ? { version: ssl.version ?? '?', cipher: ssl.cipher ?? '?' } : null,
    maxSlotWalKeepSizeBytes: keepValue < 0 ? null : keepValue * (UNIT_BYTES[keep?.unit ?? 'MB'] ?? 1024 ** 2),
    idleReplicationSlotTimeoutSeconds: idle ? Number(idle.setting) * (UNIT_SECONDS[idle.unit ?? 's'] ?? 1) : null,
    synchronizedStandbySlots: info.num < 170000 ? null : await standbySlots(client, info.sss ?? ''),
    walRate: info.rec ? { sampleBytesPerSecond: 0, sampleMs: 0, averageBytesPerSecond: null, averageOverSeconds: null } : await walRate(client, walSampleMs),
    slot,
    publicationActions: pub ? { insert: pub.pubinsert, update: pub.pubupdate, delete: pub.pubdelete, truncate: pub.pubtruncate } : null,
    role: {
      superuser: info.superuser,
      replication: info.replication,
      selectOutbox: privileges.select_outbox,
      writePosition: privileges.write_position,
      emitMessage: info.emit,
    },
    templateValues:
      /\{(aggregate_type|event_type)\}/.test(config.topic) && slot.outbox?.totalBytes != null ? await templateValues(client, config, qualified) : [],
  };
}

async function standbySlots(client: pg.Client, setting: string): Promise<NonNullable<PostgresFacts['synchronizedStandbySlots']>> {
  const names = setting
    .split(',')
    .map((n) => n.trim().replace(/^"(.*)"$/, '$1'))
    .filter((n) => n !== '' && n !== '*');
  const rows = await readSlots(client, names);
  return {
    setting,
    slots: names.map((name) => {
      const row = rows.get(name);
      return { name, exists: row !== undefined, physical: row?.slotType === 'physical', active: row?.active === true };
    }),
  };
}

/** pg_current_wal_lsn() over walSampleMs, and pg_stat_wal's bytes since its last reset (PostgreSQL 14+). */
async function walRate(client: pg.Client, walSampleMs: number): Promise<WalRate> {
  const t0 = performance.now();
  const first = (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
  await new Promise((resolve) => setTimeout(resolve, walSampleMs));
  const second = (await client.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text as bytes', [first])).rows[0]!;
  const sampleMs = Math.max(1, performance.now() - t0);
  let averageBytesPerSecond: number | null = null;
  let averageOverSeconds: number | null = null;
  try {
    const row = (
      await client.query<{ bytes: number; secs: number | null }>(
        `select wal_bytes::float8 as bytes, extract(epoch from now() - stats_reset)::float8 as secs from pg_stat_wal`,
      )
    ).rows[0];
    if (row && row.secs !== null && row.secs > 60) {
      averageBytesPerSecond = row.bytes / row.secs;
      averageOverSeconds = row.secs;
    }
  } catch {
    // pg_stat_wal is PostgreSQL 14+: the sample alone then.
  }
  return { sampleBytesPerSecond: (Number(second.bytes) * 1000) / sampleMs, sampleMs, averageBytesPerSecond, averageOverSeconds };
}

async function templateValues(client: pg.Client, config: DoctorSettings, qualified: string): Promise<PostgresFacts['templateValues']> {
  const id = (c: string) => client.escapeIdentifier(c);
  try {
    return (
      await client.query<{ aggregate_type: string; event_type: string }>(
        `select distinct ${id(config.columnAggregateType)}::text as aggregate_type, ${id(config.columnEventType)}::text as event_type
           from (select * from ${qualified} order by ${id(config.columnCreatedAt)} desc limit ${TEMPLATE_SAMPLE_ROWS}) t limit 1000`,
      )
    ).rows.map((r) => ({ aggregateType: r.aggregate_type, eventType: r.event_type }));
  } catch {
    // No such column (or no SELECT on the outbox): the topic names are unknown; the publication and role checks say why.
    return [];
  }
}

/** --standby-url: the standby's slot synchronization settings and its copy of the relay's slot. */
export async function gatherStandbyFacts(standbyUrl: string, config: DoctorSettings): Promise<StandbyFacts> {
  const client = new pg.Client({ ...pgConnection({ ...config, databaseUrl: standbyUrl }), application_name: 'outbox-tail-doctor' });
  await client.connect();
  try {
    const row = (
      await client.query<{ rec: boolean; sync: string | null; hsf: string; psn: string }>(
        `select pg_is_in_recovery() as rec, current_setting('sync_replication_slots', true) as sync,
                current_setting('hot_standby_feedback') as hsf, current_setting('primary_slot_name') as psn`,
      )
    ).rows[0]!;
    const slot = await readSlot(client, config.slot);
    return {
      inRecovery: row.rec,
      syncReplicationSlots: row.sync,
      hotStandbyFeedback: row.hsf,
      primarySlotName: row.psn,
      slot: slot ? { synced: slot.synced, invalidationReason: slot.invalidationReason } : null,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}
