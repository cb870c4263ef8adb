import type pg from 'pg';

/**
 * How the slot is made. Empty for now; PostgreSQL 17's failover slots
 * (pg_create_logical_replication_slot's `failover` argument) are meant to
 * become an option here, so every caller gets them at once.
 */
export interface CreateSlotOptions {}

const DUPLICATE_OBJECT = '42710';

/**
 * The one place a replication slot is created: logical, pgoutput, unless a
 * slot of that name exists. Returns true when this call created it. A
 * concurrent creator (two `init` runs) is not an error: its slot is used.
 */
export async function createSlot(client: pg.ClientBase, slot: string, _options: CreateSlotOptions = {}): Promise<boolean> {
  const exists = await client.query('select 1 from pg_replication_slots where slot_name = $1', [slot]);
  if ((exists.rowCount ?? 0) > 0) return false;
  try {
    await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DUPLICATE_OBJECT) return false;
    throw error;
  }
}
