import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { packageRoot } from '../shared/package-root.js';

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

const LOCK_KEY = 7_283_001_001; // arbitrary, fixed: serialises concurrent `init` runs

/**
 * Applies migrations/NNNN_name.sql in order, each once, each in its own
 * transaction, under an advisory lock so two `init` runs cannot race.
 */
export async function migrate(client: pg.Client, directory = join(packageRoot(), 'migrations')): Promise<MigrationResult> {
  const files = readdirSync(directory)
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .sort();
  await client.query('select pg_advisory_lock($1)', [LOCK_KEY]);
  try {
    await client.query(`create table if not exists outbox_tail_migrations (
      version text primary key, name text not null, applied_at timestamptz not null default now())`);
    const done = new Set((await client.query<{ version: string }>('select version from outbox_tail_migrations')).rows.map((r) => r.version));
    const result: MigrationResult = { applied: [], skipped: [] };
    for (const file of files) {
      const version = file.slice(0, 4);
      if (done.has(version)) {
        result.skipped.push(file);
        continue;
      }
      await client.query('begin');
      try {
        await client.query(readFileSync(join(directory, file), 'utf8'));
        await client.query('insert into outbox_tail_migrations(version, name) values ($1, $2)', [version, file]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
      }
      result.applied.push(file);
    }
    return result;
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_KEY]);
  }
}
