import type pg from 'pg';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { splitTable } from '../../postgres/qualified-table.js';
import { sqlOn } from '../../postgres/sql.js';
import { classifyPgError } from '../../postgres/pg-errors.js';
import { readSlot } from '../../postgres/slots/slot-catalog.js';

export interface PruneOptions {
  slot: string;
  /** Rows created before now minus this are candidates. */
  olderThanMs: number;
  batchSize: number;
  dryRun: boolean;
}

export interface PruneReport {
  table: string;
  slot: string;
  cutoff: string;
  dryRun: boolean;
  /** Rows deleted (with --dry-run: that would be). */
  deleted: number;
  batches: number;
  /** Rows older than the cutoff kept because the slot may not have passed their transaction yet. */
  heldBack: number;
  seconds: number;
}

/**
 * `outbox-tail prune`: deletes rows created before the cutoff, a small batch
 * per transaction (row locks on one batch only, no long lock on the table).
 * The publication publishes INSERTs only, so nothing of this is streamed.
 *
 * A row is deleted only when its inserting transaction is older than the
 * slot's catalog_xmin: that is the oldest transaction still running at the
 * slot's restart_lsn, so every older one ended before restart_lsn, which is
 * at or before the position the relay confirmed after Kafka acknowledged
 * it. It holds back a little more than it must (restart_lsn trails the
 * confirmed position), never less. A row frozen by VACUUM counts as old.
 */
export async function pruneOutbox(client: pg.Client, config: { table: string; columnCreatedAt: string }, options: PruneOptions): Promise<PruneReport> {
  const started = Date.now();
  const [schema, name] = splitTable(config.table);
  const table = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
  const createdAt = client.escapeIdentifier(config.columnCreatedAt);
  const sql = sqlOn(client, `pruning ${config.table}`, options.slot);
  const found = await readSlot(client, options.slot).catch((error: unknown) => Promise.reject(classifyPgError(error, `pruning ${config.table}`, options.slot)));
  const slot = found?.slotType === 'logical' ? found : null;
  if (!slot) {
    throw new OutboxTailError('SLOT_MISSING', `prune: logical replication slot ${options.slot} does not exist`, {
      hint: 'name the slot the relay streams from with --slot: prune keeps every row that slot may not have passed',
      exitCode: EXIT.PREFLIGHT,
    });
  }
  if (slot.catalogXmin === null || slot.invalidation !== null) {
    throw new OutboxTailError('SLOT_INVALIDATED', `prune: slot ${options.slot} is invalidated: which rows the relay published is unknown, so none is pruned`, {
      hint: 'recover first (outbox-tail recover, docs/verify-replay-recover-prune.md); then prune',
      exitCode: EXIT.SLOT_LOST,
    });
  }
  const cutoff = new Date(started - options.olderThanMs).toISOString();
  // age() counts back from the current transaction, so it compares across xid wraparound; a frozen xmin is oldest of all.
  const passed = `age(xmin) > (select age(catalog_xmin) from pg_replication_slots where slot_name = $2)`;
  let deleted = 0;
  let batches = 0;
  if (!options.dryRun) {
    for (;;) {
      const changed = await sql.count(
        `delete from ${table} where ctid = any(array(select ctid from ${table} where ${createdAt} < $1 and ${passed} limit $3))`,
        [cutoff, options.slot, options.batchSize],
      );
      if (changed === 0) break;
      deleted += changed;
      batches++;
    }
  } else {
    const [row] = await sql<{ n: string }>(`select count(*) as n from ${table} where ${createdAt} < $1 and ${passed}`, [cutoff, options.slot]);
    deleted = Number(row!.n);
  }
  const [held] = await sql<{ n: string }>(`select count(*) as n from ${table} where ${createdAt} < $1 and not (${passed})`, [cutoff, options.slot]);
  return {
    table: config.table,
    slot: options.slot,
    cutoff,
    dryRun: options.dryRun,
    deleted,
    batches,
    heldBack: Number(held!.n),
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}
