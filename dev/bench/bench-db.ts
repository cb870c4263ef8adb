/**
 * Database side of the benchmark: a throw-away database with the migrations
 * applied, the polling baseline's table, backlog generators and slot helpers.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { migrate } from '../../src/postgres/migrator.js';
import { Lsn } from '../../src/shared/lsn.js';
import { withClient } from '../../test/support/database.js';

// The bench's callers get it from here, with the rest of the database side.
export { withClient };

export const POLLING_TABLE = 'bench_polling_outbox';

/**
 * ~300 bytes of jsonb text per row (measured: 294-301 bytes as PostgreSQL
 * prints it), shaped like an order event. `g` is the row number.
 */
export const PAYLOAD_SQL = `jsonb_build_object(
  'orderId', g, 'customer', 'customer-' || (g % 97), 'amountCents', 100 + (g * 7919) % 90000,
  'lines', jsonb_build_array(jsonb_build_object('sku', 'sku-' || (g % 13), 'qty', 1 + g % 3)),
  'note', repeat('x', 182))`;

const SETUP_SQL = `
create table if not exists ${POLLING_TABLE} (
  seq            bigserial   primary key,
  id             uuid        not null default gen_random_uuid(),
  aggregate_type text        not null,
  aggregate_id   text        not null,
  event_type     text        not null,
  payload        jsonb       not null,
  headers        jsonb,
  created_at     timestamptz not null default now(),
  sent_at        timestamptz
);
create index if not exists ${POLLING_TABLE}_unsent on ${POLLING_TABLE} (seq) where sent_at is null;

-- p_rows rows of ~300-byte payload into p_table, committed every p_per_txn rows.
create or replace procedure bench_backlog(p_table text, p_type text, p_rows int, p_per_txn int)
language plpgsql as $$
declare
  i int := 0;
begin
  while i < p_rows loop
    execute format(
      'insert into %s (aggregate_type, aggregate_id, event_type, payload)
       select $1, (g %% 10000)::text, ''OrderCreated'', ${PAYLOAD_SQL.replace(/%/g, '%%').replace(/'/g, "''")}
         from generate_series($2::int, $3::int) g', p_table)
      using p_type, i + 1, least(i + p_per_txn, p_rows);
    commit;
    i := i + p_per_txn;
  end loop;
end $$;
`;

export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** CREATE DATABASE outbox_tail_bench_<random>, migrations applied with the relay's own migrator. */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `outbox_tail_bench_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`create database ${name}`));
  const url = withDatabase(adminUrl, name);
  const drop = async () => {
    await withClient(adminUrl, async (c) => {
      for (let attempt = 0; ; attempt++) {
        const slots = await c.query<{ slot_name: string; active_pid: number | null }>(
          'select slot_name, active_pid from pg_replication_slots where database = $1',
          [name],
        );
        if (slots.rows.length === 0) break;
        for (const s of slots.rows) if (s.active_pid !== null) await c.query('select pg_terminate_backend($1)', [s.active_pid]);
        try {
          for (const s of slots.rows) await c.query('select pg_drop_replication_slot($1)', [s.slot_name]);
        } catch (error) {
          if (attempt >= 50) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await c.query(`drop database if exists ${name} with (force)`);
    });
  };
  try {
    await withClient(url, async (c) => {
      await migrate(c);
      await c.query(SETUP_SQL);
    });
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { url, name, drop };
}

/**
 * Inserts `rows` rows of aggregate type `type` into `table`, one transaction
 * per `perTxn` rows (a server-side procedure, so the backlog is built fast).
 */
export async function insertBacklog(url: string, table: string, type: string, rows: number, perTxn: number): Promise<void> {
  await withClient(url, async (c) => {
    await c.query('set synchronous_commit = off');
    await c.query('call bench_backlog($1, $2, $3, $4)', [table, type, rows, perTxn]);
  });
}

export async function createSlot(url: string, slot: string): Promise<void> {
  await withClient(url, (c) => c.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]));
}

export { dropSlot } from '../../test/support/slot.js';

export async function currentWalLsn(client: pg.ClientBase): Promise<Lsn> {
  const { rows } = await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  return Lsn.parse(rows[0]!.lsn);
}

/** The walsender serving the slot (pg_replication_slots.active_pid), or null while none holds it. */
export async function walsenderPid(client: pg.ClientBase, slot: string): Promise<number | null> {
  const { rows } = await client.query<{ pid: number | null }>('select active_pid as pid from pg_replication_slots where slot_name = $1', [slot]);
  return rows[0]?.pid ?? null;
}

export async function confirmedFlushLsn(client: pg.ClientBase, slot: string): Promise<Lsn> {
  const { rows } = await client.query<{ lsn: string | null }>('select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [slot]);
  if (!rows[0]?.lsn) throw new Error(`slot ${slot} not found`);
  return Lsn.parse(rows[0].lsn);
}

/**
 * The end LSN of the commit record of the last transaction that inserted rows
 * of `type` into `table`: the position a relay has confirmed once it
 * published that transaction. Not pg_current_wal_lsn(), which can lie past
 * the last commit (running-xacts records, checkpoints): outbox-tail confirms
 * those positions from idle keepalives, but Debezium Server confirms only the
 * commits it processed, so a catch-up timed to the WAL end would never finish
 * for it. Found with pg_walinspect (PostgreSQL 15+, created here) among the
 * COMMIT records whose xid wrote a row of `type`, scanning back from the WAL
 * end in growing windows: the first window with a match holds the newest.
 */
export async function lastCommitEndLsn(client: pg.ClientBase, table: string, type: string): Promise<Lsn> {
  await client.query('create extension if not exists pg_walinspect');
  const { rows: ends } = await client.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn');
  const end = Lsn.parse(ends[0]!.lsn);
  for (let window = 1n << 20n; ; window *= 4n) {
    const from = end > window ? end - window : 0n;
    const { rows } = await client.query<{ lsn: string | null }>(
      `select max(w.end_lsn)::text as lsn
         from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) w
        where w.resource_manager = 'Transaction' and w.record_type like 'COMMIT%'
          and w.xid in (select xmin from ${table} where aggregate_type = $3)`,
      [Lsn.format(Lsn.of(from === 0n ? 1n : from)), Lsn.format(end), type],
    );
    if (rows[0]?.lsn) return Lsn.parse(rows[0].lsn);
    if (from === 0n) throw new Error(`no commit of a ${type} row found in the WAL`);
  }
}
