import type pg from 'pg';

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
  /** PostgreSQL 17+: pg_replication_slots.failover; null where the server has no such column (or no slot). */
  failover: boolean | null;
  /** PostgreSQL 17+, on a standby: the slot is a synchronized copy of the primary's. */
  synced: boolean | null;
  publication: string;
  publicationExists: boolean;
  publicationTables: string[];
}

/** What `outbox-tail status` reports; read over a normal (non-replication) connection. */
export async function readSlotStatus(client: pg.Client, slot: string, publication: string): Promise<SlotStatus> {
  const s = (
    await client.query(
      `select pg_current_wal_lsn()::text as current,
              r.plugin, r.active, r.active_pid, r.confirmed_flush_lsn::text as confirmed, r.restart_lsn::text as restart,
              pg_wal_lsn_diff(pg_current_wal_lsn(), r.confirmed_flush_lsn)::bigint as lag,
              pg_wal_lsn_diff(pg_current_wal_lsn(), r.restart_lsn)::bigint as retained,
              r.wal_status,
              -- columns of PostgreSQL 17+, read without naming them so older servers answer null
              (to_jsonb(r) ->> 'failover')::boolean as failover, (to_jsonb(r) ->> 'synced')::boolean as synced
         from (select 1) x left join pg_replication_slots r on r.slot_name = $1`,
      [slot],
    )
  ).rows[0];
  const pub = await client.query<{ name: string }>(
    `select p.pubname, t.schemaname || '.' || t.tablename as name
       from pg_publication p left join pg_publication_tables t on t.pubname = p.pubname where p.pubname = $1 order by 2`,
    [publication],
  );
  return {
    slot,
    exists: s.plugin !== null,
    plugin: s.plugin,
    active: s.active ?? false,
    activePid: s.active_pid,
    confirmedFlushLsn: s.confirmed,
    restartLsn: s.restart,
    currentWalLsn: s.current,
    lagBytes: s.lag === null ? null : Number(s.lag),
    retainedWalBytes: s.retained === null ? null : Number(s.retained),
    walStatus: s.wal_status,
    failover: s.failover,
    synced: s.synced,
    publication,
    publicationExists: (pub.rowCount ?? 0) > 0,
    publicationTables: pub.rows.map((r) => r.name).filter(Boolean),
  };
}
