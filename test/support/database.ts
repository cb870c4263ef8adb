/**
 * A fresh database per test file: CREATE DATABASE outbox_tail_test_<random>
 * on the run's stack, with every migrations/NNNN_*.sql applied in order.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface TestDatabase {
  /** Superuser URL of the new database. */
  url: string;
  name: string;
  /** Terminates its sessions, drops its replication slots and the database. */
  drop(): Promise<void>;
}

/**
 * A name that is unique for this run and valid as a Postgres identifier, a
 * replication slot name (lowercase letters, digits, underscores, <= 63) and a
 * Kafka topic name.
 */
export function uniqueName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 40);
  return `${clean}_${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
}

/** One short-lived connection for setup and checks; errors after the work are not the test's. */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createTestDatabase(stack: { databaseUrl: string }): Promise<TestDatabase> {
  const name = uniqueName('outbox_tail_test');
  await withClient(stack.databaseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(stack.databaseUrl, name);
  const drop = async () => {
    await withClient(stack.databaseUrl, async (c) => {
      // A database with logical slots cannot be dropped: stop their
      // walsenders, drop the slots, then force the database away.
      for (let attempt = 0; ; attempt++) {
        const slots = await c.query<{ slot_name: string; active_pid: number | null }>(
          'SELECT slot_name, active_pid FROM pg_replication_slots WHERE database = $1',
          [name],
        );
        if (slots.rows.length === 0) break;
        for (const s of slots.rows) {
          if (s.active_pid !== null) await c.query('SELECT pg_terminate_backend($1)', [s.active_pid]);
        }
        try {
          for (const s of slots.rows) await c.query('SELECT pg_drop_replication_slot($1)', [s.slot_name]);
        } catch (err) {
          if (attempt >= 50) throw err;
          await new Promise((r) => setTimeout(r, 100)); // slot still active: walsender exiting
        }
      }
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  };
  try {
    await withClient(url, async (c) => {
      for (const file of migrationFiles()) {
        try {
          await c.query(readFileSync(`${MIGRATIONS_DIR}${file}`, 'utf8'));
        } catch (err) {
          throw new Error(`migration ${file} failed on ${name}: ${(err as Error).message}`, { cause: err });
        }
      }
    });
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }
  return { url, name, drop };
}

/**
 * pool.end(), then until every session it had is closed. pg-pool's end() resolves once its clients are told to end,
 * not once their sessions are gone, so a DROP DATABASE ... WITH (FORCE) right after it can terminate one (57P01),
 * which the pool re-emits as an 'error' nobody listens to any more (an uncaught exception that failed a CI run).
 */
export async function endPool(pool: pg.Pool): Promise<void> {
  const sessions = pool.totalCount;
  let closed = 0;
  const allClosed = new Promise<void>((resolve) => {
    if (sessions === 0) resolve();
    pool.on('remove', () => {
      if (++closed >= sessions) resolve();
    });
  });
  await pool.end();
  await allClosed;
}
