import pg from 'pg';
import type { RelayConfig } from '../config/config-schema.js';
import { splitTable } from '../outbox/qualified-table.js';
import { createSlot } from './create-slot.js';
import { migrate, type MigrationResult } from './migrator.js';

export interface InitResult {
  migrations: MigrationResult;
  publication: { name: string; table: string; created: boolean };
  /** null when no slot was asked for. */
  slot: { name: string; created: boolean } | null;
}

/**
 * `outbox-tail init`: applies migrations/, creates the publication (INSERTs
 * only, so cleanup DELETEs on the outbox are not streamed) and, when a slot is
 * named, the slot, each only if missing. Safe to run again.
 */
export async function initOutbox(client: pg.Client, config: Pick<RelayConfig, 'publication' | 'table' | 'slot'>): Promise<InitResult> {
  const migrations = await migrate(client);
  const exists = await client.query('select 1 from pg_publication where pubname = $1', [config.publication]);
  const publicationCreated = exists.rowCount === 0;
  if (publicationCreated) {
    const [schema, table] = splitTable(config.table);
    await client.query(`create publication ${pg.escapeIdentifier(config.publication)} for table ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} with (publish = 'insert')`);
  }
  const slot = config.slot ? { name: config.slot, created: await createSlot(client, config.slot) } : null;
  return { migrations, publication: { name: config.publication, table: config.table, created: publicationCreated }, slot };
}
