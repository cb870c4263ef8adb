import pg from 'pg';
import { resolveConfig } from '../../src/config/resolve-config.js';
import { toRunConfig } from '../../src/config/run-config.js';
import { pgConnection } from '../../src/postgres/pg-connection.js';

/**
 * `--on-slot-lost recover` without its backfill: the lost slot is dropped and
 * created anew, and the relay streams on, so every row committed between
 * the recorded position and the new slot's consistent point stays in the
 * table only. The slot-recover fault scenario must catch it as loss.
 */
async function recreateWithoutBackfill(): Promise<void> {
  const config = toRunConfig(resolveConfig({ env: process.env }));
  const client = new pg.Client(pgConnection(config));
  await client.connect();
  try {
    for (let i = 0; ; i++) {
      try {
        await client.query('select pg_drop_replication_slot($1) from pg_replication_slots where slot_name = $1', [config.slot]);
        break;
      } catch (error) {
        if (i > 60) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [config.slot]);
    process.stdout.write(`${JSON.stringify({ event: 'slot-recovered', republished: 0, variant: 'recover-without-backfill' })}\n`);
  } finally {
    await client.end();
  }
}

export const RECOVERY_VARIANTS: Record<string, { recoverSlot: () => Promise<void> }> = {
  'recover-without-backfill': { recoverSlot: recreateWithoutBackfill },
};
