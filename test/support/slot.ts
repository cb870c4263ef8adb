import pg from 'pg';
import { onTestFinished } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';

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
  dropAfterTest(url, slot);
  return Lsn.parse(row!.lsn);
}

/**
 * Test files share one server (max_replication_slots 64) and run four at a
 * time; a slot left until its database is dropped at the end of the file
 * would let a file with many tests (or retries of a WAL shape) exhaust them.
 */
function dropAfterTest(url: string, slot: string): void {
  try {
    onTestFinished(() => dropSlot(url, slot));
  } catch {
    // Outside a test (beforeAll, npm run crash): the database drop removes it.
  }
}

/** Drops a slot if it exists, stopping the walsender that holds it first (the bench uses it too). */
export async function dropSlot(url: string, slot: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    // 3D000: the harness dropped the database (and its slots) already.
    if ((err as { code?: string }).code === '3D000') return;
    throw err;
  }
  try {
    for (let attempt = 0; ; attempt++) {
      const { rows } = await client.query<{ pid: number | null }>('select active_pid as pid from pg_replication_slots where slot_name = $1', [slot]);
      if (rows.length === 0) return;
      if (rows[0]!.pid !== null) await client.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      try {
        await client.query('select pg_drop_replication_slot($1)', [slot]);
        return;
      } catch (err) {
        // 55006 object_in_use: the walsender is still exiting; 42704: already gone.
        if ((err as { code?: string }).code === '42704') return;
        if (attempt >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await client.end().catch(() => undefined);
  }
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
