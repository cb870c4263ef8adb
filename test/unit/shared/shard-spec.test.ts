import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { allShards, parseRowFilter, parseShard, shardName, shardOfSql, shardPredicate } from '../../../src/shared/shard-spec.js';

describe('shard spec', () => {
  it('parses i/N and refuses an index outside 0..N-1 with a typed error naming the form', () => {
    expect(parseShard('1/3')).toEqual({ index: 1, count: 3 });
    expect(parseShard(' 0 / 1 ')).toEqual({ index: 0, count: 1 });
    for (const bad of ['3/3', '1', '-1/2', 'a/b', '0/0', '0/65']) {
      expect(() => parseShard(bad)).toThrow(OutboxTailError);
    }
    expect(() => parseShard('3/3')).toThrow(/i must be below N/);
  });

  it('masks the hash to 31 bits instead of abs(), which overflows at -2^31', () => {
    expect(shardOfSql('k', 4)).toBe('((hashtext(k) & 2147483647) % 4)');
    expect(shardOfSql('k', 4)).not.toMatch(/abs\(/);
    expect(shardPredicate('aggregate_id', { index: 2, count: 4 })).toBe('(((hashtext("aggregate_id") & 2147483647) % 4) = 2)');
  });

  it('names every shard from the base name, one per index', () => {
    expect(allShards(3).map((s) => shardName('orders_outbox', s.index))).toEqual(['orders_outbox_0', 'orders_outbox_1', 'orders_outbox_2']);
  });

  it('reads back the row filter as PostgreSQL prints it, quoted and cast columns included', () => {
    expect(parseRowFilter('(((hashtext(aggregate_id) & 2147483647) % 2) = 0)')).toEqual({ column: 'aggregate_id', count: 2, index: 0 });
    expect(parseRowFilter('(((hashtext(("Key")::text) & 2147483647) % 3) = 2)')).toEqual({ column: 'Key', count: 3, index: 2 });
    expect(parseRowFilter('((abs(hashtext(aggregate_id)) % 2) = 0)')).toBeNull();
    expect(parseRowFilter(null)).toBeNull();
  });
});

describe('--shard in the config', () => {
  it('derives the shard slot, publication, message prefix and a transactional id (so a watermark) per shard', () => {
    const c = resolveConfig({ flags: { slot: 'orders_outbox', shard: '1/2' } });
    expect(c).toMatchObject({
      slot: 'orders_outbox_1',
      publication: 'outbox_tail_1',
      messagePrefix: 'outbox-tail_1',
      transactionalId: 'outbox-tail-orders_outbox_1',
    });
    expect(resolveConfig({ env: { OUTBOX_TAIL_SHARD: '0/2' }, flags: { slot: 's', transactionalId: 'tx' } }).transactionalId).toBe('tx_0');
  });

  it('refuses a shard outside its count and a count that disagrees with --shards', () => {
    expect(() => resolveConfig({ flags: { slot: 's', shard: '2/2' } })).toThrow(/shard/);
    expect(() => resolveConfig({ flags: { slot: 's', shard: '0/2', shards: 3 } })).toThrow(/shards is 3/);
  });
});
