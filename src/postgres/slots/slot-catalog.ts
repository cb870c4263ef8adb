import type pg from 'pg';
import { requireFailoverSupport } from './failover-slot.js';
import { invalidationCause, type InvalidationCause } from './invalidation-cause.js';

/**
 * The slot catalog: every read, create and drop of a replication slot, and
 * the one answer to "is this slot lost, and why" (its `invalidation`). The
 * columns newer servers added (failover, synced 17+; invalidation_reason 17+;
 * conflicting 16+) are read without naming them, so older servers answer null.
 */
export interface SlotRow {
  name: string;
  /** pgoutput for a logical slot, null for a physical one. */
  plugin: string | null;
  slotType: 'logical' | 'physical' | string;
  database: string | null;
  active: boolean;
  activePid: number | null;
  confirmedFlushLsn: string | null;
  restartLsn: string | null;
  catalogXmin: string | null;
  walStatus: string | null;
  /** The server's own word (17+), kept as it is for reports. */
  invalidationReason: string | null;
  failover: boolean | null;
  synced: boolean | null;
  /** Why PostgreSQL invalidated the slot, and the fix; null while it is usable. */
  invalidation: InvalidationCause | null;
}

/** The columns SlotRow is read from, for `from pg_replication_slots r` (status adds its WAL figures beside them). */
export const SLOT_COLUMNS_SQL = `r.slot_name, r.plugin, r.slot_type, r.database, r.active, r.active_pid,
  r.confirmed_flush_lsn::text as confirmed_flush_lsn, r.restart_lsn::text as restart_lsn, r.catalog_xmin::text as catalog_xmin, r.wal_status,
  (to_jsonb(r) ->> 'invalidation_reason') as invalidation_reason, (to_jsonb(r) ->> 'conflicting')::boolean as conflicting,
  (to_jsonb(r) ->> 'failover')::boolean as failover, (to_jsonb(r) ->> 'synced')::boolean as synced`;

/** A row of SLOT_COLUMNS_SQL as the database returns it. */
export interface SlotColumns {
  slot_name: string;
  plugin: string | null;
  slot_type: string;
  database: string | null;
  active: boolean;
  active_pid: number | null;
  confirmed_flush_lsn: string | null;
  restart_lsn: string | null;
  catalog_xmin: string | null;
  wal_status: string | null;
  invalidation_reason: string | null;
  conflicting: boolean | null;
  failover: boolean | null;
  synced: boolean | null;
}

export function slotRow(r: SlotColumns): SlotRow {
  return {
    name: r.slot_name,
    plugin: r.plugin,
    slotType: r.slot_type,
    database: r.database,
    active: r.active,
    activePid: r.active_pid,
    confirmedFlushLsn: r.confirmed_flush_lsn,
    restartLsn: r.restart_lsn,
    catalogXmin: r.catalog_xmin,
    walStatus: r.wal_status,
    invalidationReason: r.invalidation_reason,
    failover: r.failover,
    synced: r.synced,
    invalidation: invalidationCause({ walStatus: r.wal_status, invalidationReason: r.invalidation_reason, conflicting: r.conflicting }),
  };
}

/** The slots of these names that exist, by name. */
export async function readSlots(client: pg.ClientBase, names: readonly string[]): Promise<Map<string, SlotRow>> {
  const { rows } = await client.query<SlotColumns>(`select ${SLOT_COLUMNS_SQL} from pg_replication_slots r where r.slot_name = any($1)`, [names]);
  return new Map(rows.map((r) => [r.slot_name, slotRow(r)]));
}

/** One slot, or null when there is none of that name. */
export async function readSlot(client: pg.ClientBase, name: string): Promise<SlotRow | null> {
  return (await readSlots(client, [name])).get(name) ?? null;
}

export interface CreateSlotOptions {
  /** failover = true (PostgreSQL 17+), so standbys with sync_replication_slots keep it; refused with a clear error on older servers. */
  failover?: boolean;
  /** Where the server is, for messages (host:port/db, no credentials). */
  where?: string;
  /** Called every NUDGE_INTERVAL_MS while the slot is created (on a standby: pg_log_standby_snapshot() on the primary). */
  nudge?: () => Promise<unknown>;
}

const DUPLICATE_OBJECT = '42710';
const NUDGE_INTERVAL_MS = 300;

/**
 * The one place a replication slot is created: logical, pgoutput, unless a
 * slot of that name exists. Returns true when this call created it. A
 * concurrent creator (two `init` runs) is not an error: its slot is used.
 */
export async function createSlot(client: pg.ClientBase, slot: string, options: CreateSlotOptions = {}): Promise<boolean> {
  if (await readSlot(client, slot)) return false;
  if (options.failover) await requireFailoverSupport(client, options.where);
  try {
    // (slot_name, plugin, temporary, twophase, failover): the 5th argument exists from PostgreSQL 17 on.
    // On a standby the creation waits for a running-xacts record from the primary: nudge asks the primary for one.
    const nudge = options.nudge;
    const timer = nudge ? setInterval(() => void nudge().catch(() => undefined), NUDGE_INTERVAL_MS) : undefined;
    try {
      if (options.failover) await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput', false, false, true)`, [slot]);
      else await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    } finally {
      clearInterval(timer);
    }
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DUPLICATE_OBJECT) return false;
    throw error;
  }
}

/** Drops the slot if it exists (a walsender holding it makes PostgreSQL refuse with 55006, which the caller classifies). */
export async function dropSlot(client: pg.ClientBase, slot: string): Promise<void> {
  await client.query('select pg_drop_replication_slot($1) where exists (select 1 from pg_replication_slots where slot_name = $1)', [slot]);
}
