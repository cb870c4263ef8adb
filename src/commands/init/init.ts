import pg from 'pg';
import { splitTable } from '../../postgres/qualified-table.js';
import { describeTarget } from '../../postgres/describe-target.js';
import { createSlot, readSlot } from '../../postgres/slots/slot-catalog.js';
import { requireFailoverSupport } from '../../postgres/slots/failover-slot.js';
import { migrate, type MigrationResult } from '../../postgres/migrator.js';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';

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
  /** --primary-url's connection, when --database-url is a hot standby: migrations and the publication are made there. */
  primary?: pg.Client,
): Promise<InitResult> {
  const where = describeTarget(config);
  const standby = (await client.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r;
  if (standby && !primary) {
    throw new OutboxTailError('STANDBY_NEEDS_PRIMARY_URL', `${where} is a hot standby: migrations and the publication can only be made on the primary`, {
      hint: "add --primary-url <the primary's URL> (used for the migrations, the publication and pg_log_standby_snapshot() while the slot is created on the standby)",
      exitCode: EXIT.PREFLIGHT,
    });
  }
  const writer = standby ? primary! : client;
  // Refuse before changing anything: --failover-slot on a server without failover slots.
  if (config.slot && config.failoverSlot) await requireFailoverSupport(client, where);
  const migrations = await migrate(writer);
  const exists = await writer.query('select 1 from pg_publication where pubname = $1', [config.publication]);
  const publicationCreated = exists.rowCount === 0;
  if (publicationCreated) {
    const [schema, table] = splitTable(config.table);
    await writer.query(
      `create publication ${pg.escapeIdentifier(config.publication)} for table ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} with (publish = 'insert')`,
    );
  }
  const warnings: string[] = [];
  let slot: InitResult['slot'] = null;
  if (config.slot) {
    const nudge = standby ? () => primary!.query('select pg_log_standby_snapshot()') : undefined;
    const created = await createSlot(client, config.slot, { failover: config.failoverSlot, where, ...(nudge ? { nudge } : {}) });
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
