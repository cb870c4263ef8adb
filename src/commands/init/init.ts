import pg from 'pg';
import { splitTable } from '../../postgres/qualified-table.js';
import { describeTarget } from '../../postgres/describe-target.js';
import { createSlot, readSlot } from '../../postgres/slots/slot-catalog.js';
import { requireFailoverSupport } from '../../postgres/slots/failover-slot.js';
import { migrate, type MigrationResult } from '../../postgres/migrator.js';

export interface InitResult {
  migrations: MigrationResult;
  publication: { name: string; table: string; created: boolean };
  /**
   * null when no slot was asked for. `failover`: the slot's flag where the
   * server has one (PostgreSQL 17+), else null.
   */
  slot: { name: string; created: boolean; failover: boolean | null } | null;
  /** Things the operator should know that did not stop init. */
  warnings: string[];
}

/**
 * `outbox-tail init`: applies migrations/, creates the publication (INSERTs
 * only, so cleanup DELETEs on the outbox are not streamed) and, when a slot is
 * named, the slot, each only if missing. Safe to run again.
 */
export async function initOutbox(
  client: pg.Client,
  config: { publication: string; table: string; slot?: string | undefined; databaseUrl?: string | undefined; failoverSlot?: boolean },
): Promise<InitResult> {
  const where = describeTarget(config);
  // Refuse before changing anything: --failover-slot on a server without failover slots.
  if (config.slot && config.failoverSlot) await requireFailoverSupport(client, where);
  const migrations = await migrate(client);
  const exists = await client.query('select 1 from pg_publication where pubname = $1', [config.publication]);
  const publicationCreated = exists.rowCount === 0;
  if (publicationCreated) {
    const [schema, table] = splitTable(config.table);
    await client.query(
      `create publication ${pg.escapeIdentifier(config.publication)} for table ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} with (publish = 'insert')`,
    );
  }
  const warnings: string[] = [];
  let slot: InitResult['slot'] = null;
  if (config.slot) {
    const created = await createSlot(client, config.slot, { failover: config.failoverSlot, where });
    const failover = (await readSlot(client, config.slot))?.failover ?? null;
    slot = { name: config.slot, created, failover };
    if (config.failoverSlot && failover === false) {
      warnings.push(
        `slot ${config.slot} exists with failover = false; --failover-slot applies when the slot is created: with no relay on it, ` +
          `ALTER_REPLICATION_SLOT ${config.slot} (FAILOVER true) on a replication connection, e.g. psql "dbname=... replication=database" (docs/operations.md, Failover slots)`,
      );
    }
  }
  return { migrations, publication: { name: config.publication, table: config.table, created: publicationCreated }, slot, warnings };
}
