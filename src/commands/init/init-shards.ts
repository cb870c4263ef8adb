import pg from 'pg';
import { createSlot } from '../../postgres/slots/slot-catalog.js';
import { requireFailoverSupport } from '../../postgres/slots/failover-slot.js';
import { migrate, type MigrationResult } from '../../postgres/migrator.js';
import { splitTable } from '../../postgres/qualified-table.js';
import { describeTarget } from '../../postgres/describe-target.js';
import { checkShardFilter, requireRowFilters } from '../../postgres/shard-check.js';
import { allShards, shardName, shardPredicate } from '../../shared/shard-spec.js';

export interface ShardInitConfig {
  publication: string;
  table: string;
  slot?: string | undefined;
  databaseUrl?: string | undefined;
  failoverSlot?: boolean;
  /** The key column the row filters hash (--column-aggregate-id). */
  columnAggregateId: string;
  source: 'table' | 'messages' | 'both';
  messagePrefix: string;
  shards: number;
}

export interface ShardInitResult {
  migrations: MigrationResult;
  shards: Array<{ index: number; publication: { name: string; created: boolean }; slot: { name: string; created: boolean } | null }>;
  /** --source messages|both: outbox_tail.emit now writes to <prefix>_<i>. */
  messagePrefixes: string[] | null;
}

/**
 * `outbox-tail init --shards N`: N publications on the outbox table, each
 * INSERTs only with the row filter of its shard, and N slots, each only if
 * missing. An existing publication with another filter is refused (two
 * relays would lose or duplicate keys), never altered behind a running relay.
 */
export async function initShardedOutbox(client: pg.Client, config: ShardInitConfig): Promise<ShardInitResult> {
  const where = describeTarget(config);
  const version = (
    await client.query<{ v: string; n: number }>(`select current_setting('server_version') as v, current_setting('server_version_num')::int as n`)
  ).rows[0]!;
  // Refuse before changing anything.
  requireRowFilters(version.n, version.v, where);
  if (config.slot && config.failoverSlot) await requireFailoverSupport(client, where);
  const migrations = await migrate(client);
  const shards = await createShardSet(client, { ...config, count: config.shards, where });
  let messagePrefixes: string[] | null = null;
  if (config.source !== 'table') {
    await client.query('insert into outbox_tail.message_shards (prefix, shards) values ($1, $2) on conflict (prefix) do update set shards = excluded.shards', [
      config.messagePrefix,
      config.shards,
    ]);
    messagePrefixes = allShards(config.shards).map((s) => shardName(config.messagePrefix, s.index));
  }
  return { migrations, shards, messagePrefixes };
}

export interface ShardSetConfig {
  publication: string;
  table: string;
  slot?: string | undefined;
  failoverSlot?: boolean;
  columnAggregateId: string;
  count: number;
  where: string;
}

/** The N publications (with their row filters) and slots of one shard set, each only if missing; init and reshard create them here. */
export async function createShardSet(client: pg.Client, config: ShardSetConfig): Promise<ShardInitResult['shards']> {
  const { where } = config;
  const [schema, table] = splitTable(config.table);
  const qualified = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;
  const shards: ShardInitResult['shards'] = [];
  for (const spec of allShards(config.count)) {
    const publication = shardName(config.publication, spec.index);
    const exists = await client.query('select 1 from pg_publication where pubname = $1', [publication]);
    const created = exists.rowCount === 0;
    if (created) {
      await client.query(
        `create publication ${pg.escapeIdentifier(publication)} for table ${qualified} where ${shardPredicate(config.columnAggregateId, spec)} with (publish = 'insert')`,
      );
    } else {
      await checkShardFilter(client, { publication, table: config.table, keyColumn: config.columnAggregateId, shard: spec });
    }
    let slot: ShardInitResult['shards'][number]['slot'] = null;
    if (config.slot) {
      const name = shardName(config.slot, spec.index);
      slot = { name, created: await createSlot(client, name, { failover: config.failoverSlot ?? false, where }) };
    }
    shards.push({ index: spec.index, publication: { name: publication, created }, slot });
  }
  return shards;
}
