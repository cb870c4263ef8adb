import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../../src/config/resolve-config.js';
import { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import { alreadyPublished } from '../../../../src/pipeline/publish/skip-published.js';
import { decodeWatermark, encodeWatermark, type Watermark } from '../../../../src/sink/watermark.js';
import {
  endsTransaction,
  KAFKA_TRANSACTION_SPAN_MS,
  keepKafkaTransactionOpen,
  transactionalBatchSize,
  type TransactionBatchable,
} from '../../../../src/pipeline/publish/batching.js';
import { Lsn } from '../../../../src/shared/lsn.js';

const lsn = (n: number) => Lsn.of(BigInt(n));

describe('exactly-once skip rule: a transaction ending at or below the watermark is already in Kafka', () => {
  // Three adjacent transactions: commit records [100,150), [150,200), [200,260); the watermark is T2's end LSN.
  const watermark = { lsn: lsn(200), commitLsn: lsn(150) };
  it('skips the transaction whose commit end LSN equals the watermark, and the ones before it', () => {
    expect(alreadyPublished(lsn(150), watermark)).toBe(true);
    expect(alreadyPublished(lsn(100), watermark)).toBe(true);
  });
  it('publishes the transaction whose commit record starts exactly at the watermark (adjacent commit)', () => {
    expect(alreadyPublished(lsn(200), watermark)).toBe(false);
    expect(alreadyPublished(lsn(201), watermark)).toBe(false);
  });
  it('skips nothing without a watermark', () => {
    expect(alreadyPublished(lsn(1), null)).toBe(false);
  });
});

describe('exactly-once batches end at PostgreSQL transaction boundaries', () => {
  const done = { endLsn: lsn(10) };
  const done2 = { endLsn: lsn(20) };
  const open = { endLsn: null };
  const queue = (entries: TransactionBatchable['txn'][]) => ({
    length: entries.length,
    peek: (i: number) => (i < entries.length ? { bytes: 10, record: {}, txn: entries[i]! } : undefined),
  });
  const limits = { batchMaxMessages: 4, batchMaxBytes: 1_000_000 };

  it('cuts before a transaction that is not complete within the batch', () => {
    expect(transactionalBatchSize(queue([done, done, done2, open, open]), limits)).toBe(3);
  });
  it('keeps whole complete transactions together and stops at the last boundary within the limit', () => {
    expect(transactionalBatchSize(queue([done, done, done2, done2, done2]), limits)).toBe(2);
    expect(transactionalBatchSize(queue([done, done2]), limits)).toBe(2);
  });
  it('ends the batch after the first transaction when that is the only boundary, so its Kafka transaction can commit', () => {
    expect(transactionalBatchSize(queue([done, open, open, open, open]), limits)).toBe(1);
  });
  it('sends a full batch of a transaction larger than a batch (the Kafka transaction stays open)', () => {
    expect(transactionalBatchSize(queue([open, open, open, open, open]), limits)).toBe(4);
    expect(transactionalBatchSize(queue([done, done, done, done, done]), limits)).toBe(4);
  });
  it('lets a Kafka transaction end only after a complete transaction with nothing of it left queued', () => {
    expect(endsTransaction(done, undefined)).toBe(true);
    expect(endsTransaction(done, { bytes: 1, record: {}, txn: done2 })).toBe(true);
    expect(endsTransaction(done, { bytes: 1, record: {}, txn: done })).toBe(false);
    expect(endsTransaction(open, undefined)).toBe(false);
  });
});

describe('exactly-once: one Kafka transaction spans several batches only in a backlog', () => {
  const limits = { batchMaxMessages: 100, batchMaxBytes: 1_000 };
  it('keeps the Kafka transaction open while a full batch is queued (by count or by bytes) and it is young', () => {
    expect(keepKafkaTransactionOpen({ messages: 100, bytes: 10 }, 0, limits)).toBe(true);
    expect(keepKafkaTransactionOpen({ messages: 1, bytes: 1_000 }, KAFKA_TRANSACTION_SPAN_MS - 1, limits)).toBe(true);
  });
  it('commits at once with less than a full batch queued (a steady rate: no record waits for later ones)', () => {
    expect(keepKafkaTransactionOpen({ messages: 99, bytes: 999 }, 0, limits)).toBe(false);
    expect(keepKafkaTransactionOpen({ messages: 0, bytes: 0 }, 0, limits)).toBe(false);
  });
  it('commits once the Kafka transaction is KAFKA_TRANSACTION_SPAN_MS old, backlog or not', () => {
    expect(keepKafkaTransactionOpen({ messages: 1_000, bytes: 100_000 }, KAFKA_TRANSACTION_SPAN_MS, limits)).toBe(false);
    expect(keepKafkaTransactionOpen({ messages: 1, bytes: 10 }, KAFKA_TRANSACTION_SPAN_MS, limits, { messages: 100, bytes: 1_000 })).toBe(false);
  });
  it('keeps it open after a batch of at least half the limits while anything is queued (a catch-up the sink outpaces)', () => {
    expect(keepKafkaTransactionOpen({ messages: 1, bytes: 10 }, 0, limits, { messages: 50, bytes: 100 })).toBe(true);
    expect(keepKafkaTransactionOpen({ messages: 1, bytes: 10 }, KAFKA_TRANSACTION_SPAN_MS - 1, limits, { messages: 3, bytes: 500 })).toBe(true);
  });
  it('commits after a large batch when nothing is queued, and after a small one with less than a full batch queued', () => {
    expect(keepKafkaTransactionOpen({ messages: 0, bytes: 0 }, 0, limits, { messages: 100, bytes: 1_000 })).toBe(false);
    expect(keepKafkaTransactionOpen({ messages: 99, bytes: 999 }, 0, limits, { messages: 49, bytes: 499 })).toBe(false);
  });
});

describe('watermark record', () => {
  const w: Watermark = {
    slot: 's1',
    lsn: Lsn.parse('1/2A'),
    commitLsn: Lsn.parse('1/10'),
    commitTime: '2025-01-01T00:00:00.000Z',
    count: 3,
    transactionalId: 'outbox-tail-s1',
    relayId: 'h:1',
  };
  it('round-trips, with LSNs as PostgreSQL text', () => {
    const bytes = encodeWatermark(w);
    expect(JSON.parse(bytes.toString()).lsn).toBe('1/2A');
    expect(decodeWatermark(bytes, 'here')).toEqual(w);
  });
  it('rejects a value it cannot read instead of treating it as no watermark', () => {
    expect(() => decodeWatermark(Buffer.from('{"slot":"s1"}'), 'offsets p0 o3')).toThrow(OutboxTailError);
    expect(() => decodeWatermark(Buffer.from('not json'), 'offsets p0 o3')).toThrow(/offsets p0 o3/);
  });
  const value = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields));
  const required = { slot: 's1', lsn: '1/2A', transactionalId: 'outbox-tail-s1' };
  it.each([
    ['slot', { lsn: '1/2A', transactionalId: 't' }],
    ['lsn', { slot: 's1', transactionalId: 't' }],
    ['transactionalId', { slot: 's1', lsn: '1/2A' }],
    ['a slot that is not text', { ...required, slot: 7 }],
    ['an lsn that is not text', { ...required, lsn: 42 }],
    ['a transactionalId that is not text', { ...required, transactionalId: null }],
  ])('refuses a watermark without %s, naming what is required and what to do', (_what, fields) => {
    let thrown: unknown;
    try {
      decodeWatermark(value(fields), 'offsets p0 o9');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OutboxTailError);
    const e = thrown as OutboxTailError;
    expect(e.code).toBe('OFFSETS_TOPIC_INVALID');
    expect(e.message).toBe('offsets p0 o9: unreadable watermark record (slot, lsn and transactionalId are required)');
    expect(e.hint).toMatch(/tombstone for its key.*another --offsets-topic/);
    expect(e.retriable).toBe(false);
  });
  it('refuses a watermark whose LSN is not PostgreSQL LSN text', () => {
    expect(() => decodeWatermark(value({ ...required, lsn: 'zz' }), 'here')).toThrow(/here: unreadable watermark record/);
  });
  it('reads a keepalive watermark (no commit) with defaults for the optional fields', () => {
    expect(decodeWatermark(value(required), 'here')).toEqual({
      slot: 's1',
      lsn: Lsn.parse('1/2A'),
      commitLsn: null,
      commitTime: null,
      count: 0,
      transactionalId: 'outbox-tail-s1',
      relayId: '',
    });
  });
  it('ignores optional fields of the wrong type instead of trusting them', () => {
    expect(decodeWatermark(value({ ...required, commitLsn: 5, commitTime: 5, count: '3', relayId: 1 }), 'here')).toMatchObject({
      commitLsn: null,
      commitTime: null,
      count: 0,
      relayId: '',
    });
  });
  it('writes a keepalive watermark with a null commit LSN', () => {
    const bytes = encodeWatermark({ ...w, commitLsn: null, commitTime: null });
    expect(JSON.parse(bytes.toString())).toEqual({
      slot: 's1',
      lsn: '1/2A',
      commitLsn: null,
      commitTime: null,
      count: 3,
      transactionalId: 'outbox-tail-s1',
      relayId: 'h:1',
    });
  });
});

describe('exactly-once config', () => {
  it('defaults to at-least-once; exactly-once derives the transactional id from the slot', () => {
    expect(resolveConfig({}).delivery).toBe('at-least-once');
    const c = resolveConfig({ flags: { slot: 'orders', delivery: 'exactly-once' } });
    expect(c).toMatchObject({
      delivery: 'exactly-once',
      transactionalId: 'outbox-tail-orders',
      offsetsTopic: 'outbox-tail.offsets',
      transactionTimeoutMs: 60_000,
      transactionLanes: 2,
    });
    expect(resolveConfig({ env: { OUTBOX_TAIL_TRANSACTION_LANES: '1' } }).transactionLanes).toBe(1);
    expect(() => resolveConfig({ flags: { transactionLanes: 5 } })).toThrow(/transaction-lanes|transactionLanes/);
    expect(() => resolveConfig({ flags: { transactionLanes: 0 } })).toThrow(/transaction-lanes|transactionLanes/);
    expect(resolveConfig({ env: { OUTBOX_TAIL_SLOT: 'orders', OUTBOX_TAIL_TRANSACTIONAL_ID: 'mine' } }).transactionalId).toBe('mine');
  });
  it('refuses exactly-once on the platformatic client instead of downgrading', () => {
    expect(() => resolveConfig({ flags: { slot: 'orders', delivery: 'exactly-once', kafkaClient: 'platformatic' } })).toThrow(/kafkajs client only/);
  });
});
