/**
 * The naive resharding procedure, for the reshard test's negative control:
 * stop the old relays first, then create the new shard set. The
 * transactions committed between the old relays' last confirmed position
 * and the new slots' consistent point are in neither set: lost.
 * (`outbox-tail reshard` creates the new set first, src/commands/reshard/reshard.ts.)
 */
import type pg from 'pg';
import { createShardSet } from '../../src/commands/init/init-shards.js';

export async function naiveReshard(
  client: pg.Client,
  config: { table: string; toSlot: string; toPublication: string; to: number },
  steps: { stopOld: () => Promise<void>; startNew: () => Promise<void> },
): Promise<void> {
  await steps.stopOld();
  // The writers keep writing while the operator types the next command.
  await new Promise((r) => setTimeout(r, 1_000));
  await createShardSet(client, {
    publication: config.toPublication,
    table: config.table,
    slot: config.toSlot,
    columnAggregateId: 'aggregate_id',
    count: config.to,
    where: 'test',
  });
  await steps.startNew();
}
