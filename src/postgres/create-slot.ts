import type pg from 'pg';
import { requireFailoverSupport } from './failover-slot.js';

export interface CreateSlotOptions {
  /** failover = true (PostgreSQL 17+), so standbys with sync_replication_slots keep it; refused with a clear error on older servers. */
  failover?: boolean;
  /** Where the server is, for messages (host:port/db, no credentials). */
  where?: string;
}

const DUPLICATE_OBJECT = '42710';

/**
 * The one place a replication slot is created: logical, pgoutput, unless a
 * slot of that name exists. Returns true when this call created it. A
 * concurrent creator (two `init` runs) is not an error: its slot is used.
 */
export async function createSlot(client: pg.ClientBase, slot: string, options: CreateSlotOptions = {}): Promise<boolean> {
  const exists = await client.query('select 1 from pg_replication_slots where slot_name = $1', [slot]);
  if ((exists.rowCount ?? 0) > 0) return false;
  if (options.failover) await requireFailoverSupport(client, options.where);
  try {
    // (slot_name, plugin, temporary, twophase, failover): the 5th argument exists from PostgreSQL 17 on.
    if (options.failover) await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput', false, false, true)`, [slot]);
    else await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DUPLICATE_OBJECT) return false;
    throw error;
  }
}
