import { describe, expect, it } from 'vitest';
import type { OutboxEvent } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import { compileTopicTemplate } from '../../../../src/pipeline/publish/record-format/topic-template.js';

const event = (over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: 'e1',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'OrderCreated',
  payload: Buffer.from('{"a": 1}'),
  headers: { trace: 't-1', id: 'spoofed' },
  createdAt: '2026-11-30T00:00:00.000000Z',
  table: 'public.outbox',
  txn: { seq: 1, xid: 7, commitLsn: Lsn.of(0x1925e80n), commitTime: 0n, endLsn: null },
  ...over,
});

describe('topic template', () => {
  it('fills placeholders from the row', () => {
    expect(compileTopicTemplate('outbox.event.{aggregate_type}')(event())).toBe('outbox.event.order');
    expect(compileTopicTemplate('{table}-{event_type}')(event())).toBe('public.outbox-OrderCreated');
  });

  it("sanitises values to Kafka's legal characters and length", () => {
    expect(compileTopicTemplate('outbox.{aggregate_type}')(event({ aggregateType: 'Bestellung/Ärger Ü' }))).toBe('outbox.Bestellung__rger__');
    expect(compileTopicTemplate('{aggregate_type}')(event({ aggregateType: 'x'.repeat(300) }))).toHaveLength(249);
    expect(compileTopicTemplate('{aggregate_type}')(event({ aggregateType: '..' }))).toBe('_..');
  });
});

describe('RecordBuilder', () => {
  it('keys by aggregate id, keeps payload bytes, and adds the standard headers over user headers', () => {
    const e = event();
    const r = new RecordBuilder('outbox.event.{aggregate_type}').build(e);
    expect(r.topic).toBe('outbox.event.order');
    expect(r.key).toBe('o-1');
    expect(r.value).toBe(e.payload);
    expect(r.headers).toEqual({
      trace: 't-1',
      id: 'e1',
      event_type: 'OrderCreated',
      aggregate_type: 'order',
      aggregate_id: 'o-1',
      created_at: '2026-11-30T00:00:00.000000Z',
      commit_lsn: '0/1925E80',
    });
  });

  it('builds the same headers and size without user headers, with and without created_at', () => {
    const sized = (h: Record<string, string>, e: OutboxEvent) =>
      70 + e.payload.length + e.aggregateId.length + Object.entries(h).reduce((n, [k, v]) => n + k.length + v.length + 2, 0);
    for (const createdAt of ['2026-11-30T00:00:00.000000Z', null]) {
      const e = event({ headers: {}, createdAt });
      const r = new RecordBuilder('outbox.event.{aggregate_type}').build(e);
      const expected: Record<string, string> = { id: 'e1', event_type: 'OrderCreated', aggregate_type: 'order', aggregate_id: 'o-1' };
      if (createdAt !== null) expected.created_at = createdAt;
      expected.commit_lsn = '0/1925E80';
      expect(r.headers).toEqual(expected);
      expect(Object.keys(r.headers)).toEqual(Object.keys(expected));
      expect(r.bytes).toBe(sized(expected, e));
    }
    const e = event();
    expect(new RecordBuilder('t').build(e).bytes).toBe(sized(new RecordBuilder('t').build(e).headers, e));
  });

  it('formats commit_lsn per transaction and picks topics per aggregate type', () => {
    const b = new RecordBuilder('{aggregate_type}.{event_type}');
    const t1 = { seq: 1, xid: 7, commitLsn: Lsn.of(0x10n), commitTime: 0n, endLsn: null };
    const t2 = { seq: 2, xid: 8, commitLsn: Lsn.of(0x1_0000_0020n), commitTime: 0n, endLsn: null };
    expect(b.build(event({ txn: t1 })).headers.commit_lsn).toBe('0/10');
    expect(b.build(event({ txn: t1, aggregateType: 'pay ment' })).topic).toBe('pay_ment.OrderCreated');
    expect(b.build(event({ txn: t2, eventType: 'OrderPaid' })).headers.commit_lsn).toBe('1/20');
    expect(b.build(event({ txn: t2, eventType: 'OrderPaid' })).topic).toBe('order.OrderPaid');
    expect(b.build(event({ txn: t2 })).topic).toBe('order.OrderCreated');
  });

  it('makes dead-letter pointers without the payload', () => {
    const r = new RecordBuilder('t').deadLetter(event({ payload: Buffer.from('SECRET') }), 'oversize: 2000000 bytes', 'outbox.event.order', 'dlq');
    expect(r.topic).toBe('dlq');
    expect(JSON.parse(r.value.toString())).toEqual({
      id: 'e1',
      reason: 'oversize: 2000000 bytes',
      table: 'public.outbox',
      commit_lsn: '0/1925E80',
      xid: 7,
      original_topic: 'outbox.event.order',
    });
    expect(r.value.toString()).not.toContain('SECRET');
  });
});
