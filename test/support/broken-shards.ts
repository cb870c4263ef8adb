/**
 * Shard layouts for the sharded crash test: the correct one (shard i of N,
 * every relay on the same N) and a broken one for its negative control, where
 * the relays' row filters use different moduli (shard 0 of N, shard 1 of N+1,
 * ...). Each relay's own filter matches its --shard, so the relay's startup
 * check passes; only together do they overlap (a key in two shards:
 * duplicates) and leave gaps (a key in none: loss). The recount must catch it.
 */
import { allShards, type ShardSpec } from '../../src/shared/shard-spec.js';

export const SHARD_LAYOUTS = {
  correct: (n: number): ShardSpec[] => allShards(n),
  'mixed-modulus': (n: number): ShardSpec[] => allShards(n).map(({ index }) => ({ index, count: n + index })),
} as const;

export type ShardLayout = keyof typeof SHARD_LAYOUTS;
