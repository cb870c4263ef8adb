import type pg from 'pg';
import { splitTable } from '../qualified-table.js';
import type { InvalidationCause } from './invalidation-cause.js';
import { SLOT_COLUMNS_SQL, slotRow, type SlotColumns } from './slot-catalog.js';

export interface SlotStatus {
  slot: string;
  exists: boolean;
  plugin: string | null;
  active: boolean;
  activePid: number | null;
  confirmedFlushLsn: string | null;
  restartLsn: string | null;
  currentWalLsn: string;
  lagBytes: number | null;
  retainedWalBytes: number | null;
  walStatus: string | null;
  /** pg_replication_slots.safe_wal_size: WAL that can still be written before the slot is lost (negative once unreserved); null when max_slot_wal_keep_size is -1, or the slot is lost or missing. */
  safeWalSizeBytes: number | null;
  /** The server's max_slot_wal_keep_size in bytes, -1 = unlimited (PostgreSQL's own convention). */
  maxSlotWalKeepSizeBytes: number;
  /** PostgreSQL 17+: pg_replication_slots.invalidation_reason (null when valid, or on older servers). */
  invalidationReason: string | null;
  /** Why the slot was invalidated and the setting to change (null when it is not invalidated). */
  invalidation: InvalidationCause | null;
  /** logical or physical (null when the slot does not exist). */
  slotType: string | null;
  /** The database of a logical slot. */
  database: string | null;
  /** PostgreSQL 17+: pg_replication_slots.failover; null where the server has no such column (or no slot). */
  failover: boolean | null;
  /** PostgreSQL 17+, on a standby: the slot is a synchronized copy of the primary's. */
  synced: boolean | null;
  publication: string;
  publicationExists: boolean;
  publicationTables: string[];
  /** The outbox table: planner's row estimate (null before the first ANALYZE), size with indexes and TOAST, oldest created-at. */
  outbox: { table: string; rowsEstimate: number | null; totalBytes: number | null; oldestCreatedAt: string | null } | null;
  /**
   * The server is a hot standby (decoding there, PostgreSQL 16+): the WAL's end above is what it replayed, and
   * replayLagBytes what it received from the primary but has not replayed yet. null on a primary.
   */
  standby: { replayLagBytes: number | null } | null;
}

/** What `outbox-tail status` reports; read over a normal (non-replication) connection. */
export async function readSlotStatus(
  client: pg.Client,
  slot: string,
  publication: string,
  outbox?: { table: string; createdAtColumn: string },
): Promise<SlotStatus> {
  const s = (
    await client.query<
      SlotColumns & {
        current: string;
        lag: string | null;
        retained: string | null;
        safe: string | null;
        max_keep: string;
        rec: boolean;
        replay_lag: string | null;
      }
    >(
      // On a standby pg_current_wal_lsn() fails: the WAL's end there is what it replayed.
      `with w as (select pg_is_in_recovery() as rec,
                         case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_lsn() end as wal_end)
       select w.wal_end::text as current, w.rec,
              case when w.rec then pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint end::text as replay_lag,
              pg_wal_lsn_diff(w.wal_end, r.confirmed_flush_lsn)::bigint as lag,
              pg_wal_lsn_diff(w.wal_end, r.restart_lsn)::bigint as retained, r.safe_wal_size::text as safe,
              (select case when setting::bigint < 0 then -1 else pg_size_bytes(setting || unit) end::text
                 from pg_settings where name = 'max_slot_wal_keep_size') as max_keep,
              ${SLOT_COLUMNS_SQL}
         from w left join pg_replication_slots r on r.slot_name = $1`,
      [slot],
    )
  ).rows[0]!;
  const row = s.slot_name === null ? null : slotRow(s);
  const pub = await client.query<{ name: string }>(
    `select p.pubname, t.schemaname || '.' || t.tablename as name
       from pg_publication p left join pg_publication_tables t on t.pubname = p.pubname where p.pubname = $1 order by 2`,
    [publication],
  );
  return {
    slot,
    exists: s.plugin !== null,
    plugin: s.plugin,
    active: row?.active ?? false,
    activePid: row?.activePid ?? null,
    confirmedFlushLsn: row?.confirmedFlushLsn ?? null,
    restartLsn: row?.restartLsn ?? null,
    currentWalLsn: s.current,
    lagBytes: s.lag === null ? null : Number(s.lag),
    retainedWalBytes: s.retained === null ? null : Number(s.retained),
    walStatus: row?.walStatus ?? null,
    safeWalSizeBytes: s.safe === null ? null : Number(s.safe),
    maxSlotWalKeepSizeBytes: Number(s.max_keep),
    invalidationReason: row?.invalidationReason ?? null,
    invalidation: row?.invalidation ?? null,
    slotType: row?.slotType ?? null,
    database: row?.database ?? null,
    failover: row?.failover ?? null,
    synced: row?.synced ?? null,
    publication,
    publicationExists: (pub.rowCount ?? 0) > 0,
    publicationTables: pub.rows.map((r) => r.name).filter(Boolean),
    outbox: outbox ? await readOutboxStats(client, outbox.table, outbox.createdAtColumn) : null,
    standby: s.rec ? { replayLagBytes: s.replay_lag === null ? null : Number(s.replay_lag) } : null,
  };
}

/** Size and age of the outbox, what a retention window (prune) is chosen by; nulls when the table or column is not there. */
async function readOutboxStats(client: pg.Client, table: string, createdAtColumn: string): Promise<NonNullable<SlotStatus['outbox']>> {
  const [schema, name] = splitTable(table);
  const qualified = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
  const size = (
    await client.query<{ rows: number | null; bytes: string | null; has_created_at: boolean; can_read: boolean }>(
      `select nullif(c.reltuples, -1)::bigint::float8 as rows, pg_total_relation_size(c.oid)::text as bytes,
              has_table_privilege(c.oid, 'SELECT') as can_read,
              exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = $3 and not a.attisdropped) as has_created_at
         from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2`,
      [schema, name, createdAtColumn],
    )
  ).rows[0];
  if (!size) return { table, rowsEstimate: null, totalBytes: null, oldestCreatedAt: null };
  // A least-privilege relay role may not read the outbox (docker/least-privilege.sql): then its age is unknown.
  const oldest =
    size.has_created_at && size.can_read
      ? (await client.query<{ oldest: string | null }>(`select min(${client.escapeIdentifier(createdAtColumn)})::text as oldest from ${qualified}`)).rows[0]!
          .oldest
      : null;
  return { table, rowsEstimate: size.rows, totalBytes: size.bytes === null ? null : Number(size.bytes), oldestCreatedAt: oldest };
}
