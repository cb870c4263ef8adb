import pg from 'pg';
import { EXIT, OutboxTailError } from './outbox-tail-error.js';

/**
 * The shard math, in one place: which shard a key lives in, the names of a
 * shard's slot, publication, message prefix and transactional id, and the
 * publication row filter that selects the shard's keys.
 *
 * The hash is PostgreSQL's hashtext() (immutable, so a row filter may use
 * it), masked to 31 bits rather than abs(): abs(hashtext(k)) overflows for
 * hashtext(k) = -2^31. The key's shard is always computed by PostgreSQL (row
 * filter, outbox_tail.emit, writeOutboxEvent), never re-implemented in JS.
 */
export interface ShardSpec {
  /** 0-based shard index, 0 <= index < count. */
  readonly index: number;
  /** Number of shards (>= 1). */
  readonly count: number;
}

/** The most shards we accept: each is a slot and a walsender, max_replication_slots is rarely above a few dozen. */
export const MAX_SHARDS = 64;

/** The SQL expression of a key's shard; `key` is an SQL expression (a quoted column, a parameter). */
export function shardOfSql(key: string, count: number | string): string {
  return `((hashtext(${key}) & 2147483647) % ${count})`;
}

/** The row filter of shard i/N on the key column (quoted here). */
export function shardPredicate(keyColumn: string, spec: ShardSpec): string {
  return `(${shardOfSql(pg.escapeIdentifier(keyColumn), spec.count)} = ${spec.index})`;
}

/** `<base>_<i>`: the shard's slot, publication or message prefix. */
export function shardName(base: string, index: number): string {
  return `${base}_${index}`;
}

/** PostgreSQL's NAMEDATALEN - 1: a longer slot or publication name is truncated to it, silently. */
const MAX_NAME_BYTES = 63;

/**
 * Why `base` cannot name a slot or publication of its own, or undefined when
 * it can: unsharded, it must fit in 63 bytes; with `count` shards, so must its
 * longest shard name (`<base>_<count-1>`), or shards whose names differ only
 * past byte 63 would share one slot.
 */
export function shardNamesTooLong(base: string, count?: number): string | undefined {
  const longest = count === undefined ? base : shardName(base, count - 1);
  const bytes = Buffer.byteLength(longest, 'utf8');
  if (bytes <= MAX_NAME_BYTES) return undefined;
  return count === undefined
    ? `is ${bytes} bytes; PostgreSQL names are at most ${MAX_NAME_BYTES} bytes (it truncates longer ones)`
    : `gives shard names of up to ${bytes} bytes (${longest}); PostgreSQL names are at most ${MAX_NAME_BYTES} bytes and it truncates longer ones, so two shards could share one`;
}

/** Every shard of N. */
export function allShards(count: number): ShardSpec[] {
  return Array.from({ length: count }, (_, index) => ({ index, count }));
}

function invalidShard(value: string, why: string): OutboxTailError {
  return new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n  --shard ${JSON.stringify(value)}: ${why}`, {
    hint: 'give the shard as i/N with 0 <= i < N, e.g. --shard 0/2 for the first of two shards (docs/sharding.md)',
    exitCode: EXIT.CONFIG,
  });
}

/** Parses "i/N" (--shard, OUTBOX_TAIL_SHARD). */
export function parseShard(value: string): ShardSpec {
  const m = /^\s*(\d{1,3})\s*\/\s*(\d{1,3})\s*$/.exec(value);
  if (!m) throw invalidShard(value, 'expected i/N');
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw invalidShard(value, `N must be between 1 and ${MAX_SHARDS}`);
  if (index >= count) throw invalidShard(value, `i must be below N (shards are numbered 0..${count - 1})`);
  return { index, count };
}

export function formatShard(spec: ShardSpec): string {
  return `${spec.index}/${spec.count}`;
}

/** The key column as PostgreSQL prints it back in a row filter: `aggregate_id`, `"Key"`, `(key)::text`. */
function bareColumn(expr: string): string {
  let e = expr.trim();
  for (;;) {
    const next = e.replace(/::text$/, '').replace(/^\((.*)\)$/, '$1');
    if (next === e) break;
    e = next;
  }
  return e.startsWith('"') ? e.slice(1, -1).replaceAll('""', '"') : e;
}

/**
 * Reads back a row filter as pg_publication_tables.rowfilter prints it
 * (`(((hashtext(aggregate_id) & 2147483647) % 2) = 0)`): the shard it selects
 * and the key column, or null when it is not a shard filter of ours.
 */
export function parseRowFilter(rowfilter: string | null): (ShardSpec & { column: string }) | null {
  if (rowfilter === null) return null;
  const m = /^\(\(\(hashtext\((.+)\) & 2147483647\) % (\d+)\) = (\d+)\)$/.exec(rowfilter.trim());
  if (!m) return null;
  return { column: bareColumn(m[1]!), count: Number(m[2]), index: Number(m[3]) };
}
