import pg from 'pg';
import { Lsn } from '../../src/replication/lsn.js';

/** Runs one query on a short-lived connection. */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function createSlot(url: string, slot: string): Promise<Lsn> {
  const [row] = await query<{ lsn: string }>(url, `select lsn::text from pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
  return Lsn.parse(row!.lsn);
}

export async function confirmedFlushLsn(url: string, slot: string): Promise<Lsn> {
  const [row] = await query<{ lsn: string | null }>(url, 'select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [slot]);
  if (!row?.lsn) throw new Error(`slot ${slot} not found`);
  return Lsn.parse(row.lsn);
}

export async function currentWalLsn(url: string): Promise<Lsn> {
  const [row] = await query<{ lsn: string }>(url, 'select pg_current_wal_lsn()::text as lsn');
  return Lsn.parse(row!.lsn);
}

/** Polls until the slot's confirmed_flush_lsn reaches `lsn`. */
export async function waitForConfirmed(url: string, slot: string, lsn: Lsn, timeoutMs = 30_000): Promise<Lsn> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const confirmed = await confirmedFlushLsn(url, slot);
    if (confirmed >= lsn) return confirmed;
    if (Date.now() > deadline) throw new Error(`slot ${slot} confirmed ${Lsn.format(confirmed)}, expected >= ${Lsn.format(lsn)} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Commits a transaction and returns its commit record's end LSN as seen by the slot's consumer (pg_current_wal_insert_lsn after commit bounds it). */
export async function walAfterCommit(url: string): Promise<Lsn> {
  return currentWalLsn(url);
}
