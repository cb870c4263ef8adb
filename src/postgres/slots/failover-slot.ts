import type pg from 'pg';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';

/** The first release with failover slots (pg_create_logical_replication_slot's 5th argument, pg_replication_slots.failover). */
export const FAILOVER_MIN_VERSION_NUM = 170000;

/** Throws FAILOVER_SLOT_UNSUPPORTED (exit 3) naming the server version and the fix when the server predates PostgreSQL 17. */
export async function requireFailoverSupport(client: pg.ClientBase, where?: string): Promise<void> {
  const row = (
    await client.query<{ num: string; version: string }>(`select current_setting('server_version_num') as num, current_setting('server_version') as version`)
  ).rows[0]!;
  if (Number(row.num) >= FAILOVER_MIN_VERSION_NUM) return;
  throw new OutboxTailError(
    'FAILOVER_SLOT_UNSUPPORTED',
    `--failover-slot needs PostgreSQL 17 or later, but the server${where ? ` at ${where}` : ''} is PostgreSQL ${row.version} (server_version_num ${row.num}): it has no failover slots`,
    {
      hint: 'upgrade the server to PostgreSQL 17+, or create the slot without --failover-slot (OUTBOX_TAIL_FAILOVER_SLOT=false); a slot on an older primary is not kept by standbys, so after a failover the relay halts with SLOT_MISSING (docs/operations.md, Failover slots)',
      exitCode: EXIT.PREFLIGHT,
    },
  );
}
