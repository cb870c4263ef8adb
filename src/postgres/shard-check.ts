import type pg from 'pg';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { splitTable } from './qualified-table.js';
import { formatShard, parseRowFilter, shardPredicate, type ShardSpec } from '../shared/shard-spec.js';

/** Publication row filters, which select a shard's rows, exist from PostgreSQL 15 on. */
export function requireRowFilters(versionNum: number, version: string, where: string): void {
  if (versionNum >= 150000) return;
  throw new OutboxTailError(
    'SHARDS_UNSUPPORTED',
    `sharding the outbox table needs PostgreSQL 15 or later (publication row filters); ${where} runs ${version}`,
    {
      hint: 'upgrade PostgreSQL to 15+, or run one relay without --shards/--shard (docs/sharding.md); with --source messages, shards need PostgreSQL 14+',
      exitCode: EXIT.PREFLIGHT,
    },
  );
}

/**
 * run --shard i/N: the shard's publication must select exactly shard i of N
 * on the key column. A filter of another N, another i or another column would
 * lose or duplicate keys between relays, silently: refuse to start instead.
 */
export async function checkShardFilter(client: pg.Client, config: { publication: string; table: string; keyColumn: string; shard: ShardSpec }): Promise<void> {
  const [schema, table] = splitTable(config.table);
  const row = (
    await client.query<{ rowfilter: string | null }>('select rowfilter from pg_publication_tables where pubname = $1 and schemaname = $2 and tablename = $3', [
      config.publication,
      schema,
      table,
    ])
  ).rows[0];
  const found = parseRowFilter(row?.rowfilter ?? null);
  if (found && found.index === config.shard.index && found.count === config.shard.count && found.column === config.keyColumn) return;
  const expected = shardPredicate(config.keyColumn, config.shard);
  const has = row?.rowfilter ? `row filter ${row.rowfilter}` : 'no row filter';
  throw new OutboxTailError(
    'SHARD_FILTER_MISMATCH',
    `--shard ${formatShard(config.shard)}: publication ${config.publication} has ${has} on ${config.table}, shard ${formatShard(config.shard)} needs WHERE ${expected}`,
    {
      hint: `run \`outbox-tail init --shards ${config.shard.count}\` for this slot and table, or ALTER PUBLICATION ${config.publication} SET TABLE ${config.table} WHERE ${expected} (docs/sharding.md)`,
      exitCode: EXIT.PREFLIGHT,
    },
  );
}
