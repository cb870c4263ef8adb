import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MalformedRow, OutboxEvent, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';

const TXN: Transaction = { seq: 1, xid: 7, commitLsn: Lsn.of(0x1925e80n), commitTime: 0n, endLsn: null };
const event = (over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: 'e1',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'OrderCreated',
  payload: Buffer.from('{"a": 1}'),
  headers: {},
  createdAt: null,
  table: 'public.outbox',
  txn: TXN,
  ...over,
});
const sized = (headers: Record<string, string>, e: OutboxEvent) =>
  70 + e.payload.length + e.aggregateId.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 2, 0);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RecordBuilder: user headers and created_at', () => {
  it('adds no created_at header when the row has none, also with user headers', () => {
    const e = event({ headers: { trace: 't-1' }, createdAt: null });
    const r = new RecordBuilder('t').build(e);
    expect(r.headers).toEqual({ trace: 't-1', id: 'e1', event_type: 'OrderCreated', aggregate_type: 'order', aggregate_id: 'o-1', commit_lsn: '0/1925E80' });
    expect('created_at' in r.headers).toBe(false);
    expect(r.bytes).toBe(sized(r.headers, e));
  });

  it('formats commit_lsn once per transaction, not once per record', () => {
    const format = vi.spyOn(Lsn, 'format');
    const b = new RecordBuilder('t');
    for (let i = 0; i < 5; i++) expect(b.build(event({ id: `e${i}` })).headers.commit_lsn).toBe('0/1925E80');
    expect(format).toHaveBeenCalledTimes(1);
    expect(b.build(event({ txn: { ...TXN, seq: 2, commitLsn: Lsn.of(0x1925f00n) } })).headers.commit_lsn).toBe('0/1925F00');
    expect(format).toHaveBeenCalledTimes(2);
  });
});

describe('RecordBuilder: --record-headers', () => {
  it('sends only the chosen standard headers, id always, and the user headers untouched', () => {
    const e = event({ headers: { trace: 't-1', event_type: 'spoofed' }, createdAt: '2026-12-01T12:27:21.696420Z' });
    const r = new RecordBuilder('t', ['id', 'event_type']).build(e);
    expect(r.headers).toEqual({ trace: 't-1', id: 'e1', event_type: 'OrderCreated' });
    expect(r.bytes).toBe(sized(r.headers, e));
    expect(new RecordBuilder('t', ['id']).build(event()).headers).toEqual({ id: 'e1' });
  });

  it('keeps created_at and commit_lsn when chosen, and the full set builds what the default builds', () => {
    const e = event({ createdAt: '2026-12-01T12:27:21.696420Z' });
    expect(new RecordBuilder('t', ['id', 'created_at', 'commit_lsn']).build(e).headers).toEqual({
      id: 'e1',
      created_at: '2026-12-01T12:27:21.696420Z',
      commit_lsn: '0/1925E80',
    });
    const all = new RecordBuilder('t', ['commit_lsn', 'created_at', 'aggregate_id', 'aggregate_type', 'event_type', 'id']).build(e);
    expect(all).toEqual(new RecordBuilder('t').build(e));
  });

  it('sends each standard header when chosen next to id, and only that one', () => {
    const e = event({ createdAt: '2026-12-01T12:27:21.696420Z' });
    const expected = {
      event_type: 'OrderCreated',
      aggregate_type: 'order',
      aggregate_id: 'o-1',
      created_at: '2026-12-01T12:27:21.696420Z',
      commit_lsn: '0/1925E80',
    } as const;
    for (const [name, value] of Object.entries(expected)) {
      const r = new RecordBuilder('t', ['id', name as keyof typeof expected]).build(e);
      expect(r.headers, name).toEqual({ id: 'e1', [name]: value });
      expect(r.bytes, name).toBe(sized(r.headers, e));
    }
  });

  it('sends no created_at header for a row without one, even when created_at is chosen', () => {
    const r = new RecordBuilder('t', ['id', 'aggregate_id', 'created_at']).build(event({ createdAt: null }));
    expect(r.headers).toEqual({ id: 'e1', aggregate_id: 'o-1' });
    expect('created_at' in r.headers).toBe(false);
  });
});

describe('RecordBuilder: dead-letter pointers', () => {
  it('keys a pointer by the outbox id and carries reason, commit LSN and id as headers', () => {
    const r = new RecordBuilder('t').deadLetter(event(), 'oversize: 2000000 bytes', 'outbox.event.order', 'dlq');
    expect(r.key).toBe('e1');
    expect(r.headers).toEqual({ reason: 'oversize: 2000000 bytes', commit_lsn: '0/1925E80', id: 'e1' });
    expect(r.bytes).toBe(70 + r.value.length + 100);
  });

  it('points at a malformed row without an id by its transaction, with no id header and no original topic', () => {
    const row: MalformedRow = { id: null, reason: 'column(s) id missing from public.outbox', table: 'public.outbox', txn: TXN };
    const r = new RecordBuilder('t').malformedToDeadLetter(row, 'dlq');
    expect(r.topic).toBe('dlq');
    expect(r.key).toBe('xid-7');
    expect(r.headers).toEqual({ reason: 'malformed: column(s) id missing from public.outbox', commit_lsn: '0/1925E80' });
    expect(JSON.parse(r.value.toString())).toEqual({
      id: null,
      reason: 'malformed: column(s) id missing from public.outbox',
      table: 'public.outbox',
      commit_lsn: '0/1925E80',
      xid: 7,
      original_topic: null,
    });
    expect(r.bytes).toBe(70 + r.value.length + 100);
  });

  it('keeps the id of a malformed row that has one', () => {
    const row: MalformedRow = { id: 'e9', reason: 'column headers is not valid JSON', table: 'public.outbox', txn: TXN };
    const r = new RecordBuilder('t').malformedToDeadLetter(row, 'dlq');
    expect(r.key).toBe('e9');
    expect(r.headers.id).toBe('e9');
    expect(JSON.parse(r.value.toString())).toMatchObject({ id: 'e9', reason: 'malformed: column headers is not valid JSON', original_topic: null });
  });
});
