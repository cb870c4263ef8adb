import { describe, expect, it } from 'vitest';
import type { MalformedRow, OutboxEvent, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { DEFAULT_OUTBOX_COLUMNS, type ColumnMapping } from '../../../../src/pipeline/assemble/outbox-columns.js';
import { isMalformed, RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import type { ColumnValue, RelationColumn } from '../../../../src/pipeline/decode/pgoutput-decoder.js';

const COLUMNS: ColumnMapping = DEFAULT_OUTBOX_COLUMNS;
const TXN: Transaction = { seq: 1, xid: 42, commitLsn: Lsn.of(0x100n), commitTime: 0n, endLsn: null };
const relation = (...names: string[]): RelationColumn[] => names.map((name, i) => ({ name, typeOid: 25, typeMod: -1, isKey: i === 0 }));
const FULL = relation('id', 'aggregate_type', 'aggregate_id', 'event_type', 'payload', 'headers', 'created_at');
const row = (...values: (string | null | undefined)[]): ColumnValue[] => values.map((v) => (v == null ? v : Buffer.from(v)));

function mapperFor(columns: RelationColumn[], mapping = COLUMNS): RowMapper {
  const mapper = new RowMapper(mapping, 'public.outbox');
  mapper.onRelation(columns);
  return mapper;
}
function malformed(result: OutboxEvent | MalformedRow): MalformedRow {
  expect(isMalformed(result)).toBe(true);
  return result as MalformedRow;
}
function event(result: OutboxEvent | MalformedRow): OutboxEvent {
  expect(isMalformed(result), isMalformed(result) ? result.reason : '').toBe(false);
  return result as OutboxEvent;
}

describe('RowMapper', () => {
  it('reports an INSERT before any Relation message as malformed instead of guessing the layout', () => {
    const mapper = new RowMapper(COLUMNS, 'public.outbox');
    expect(mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', null, null), TXN)).toEqual({
      id: null,
      reason: 'INSERT on public.outbox before its Relation message',
      table: 'public.outbox',
      txn: TXN,
    });
  });

  it('maps a table without the optional headers and created_at columns: no headers, created_at null', () => {
    // the optional columns are absent: the value after the id must not be read as headers or created_at
    const mapper = mapperFor(relation('id', 'aggregate_type', 'aggregate_id', 'event_type', 'payload'));
    const e = event(mapper.map(row('e1', 'order', 'o-1', 'OrderCreated', '{"a":1}'), TXN));
    expect(e).toEqual({
      id: 'e1',
      aggregateType: 'order',
      aggregateId: 'o-1',
      eventType: 'OrderCreated',
      payload: Buffer.from('{"a":1}'),
      headers: {},
      createdAt: null,
      table: 'public.outbox',
      txn: TXN,
    });
  });

  it('maps by column name, wherever the columns are', () => {
    const mapper = mapperFor(relation('payload', 'created_at', 'tenant', 'event_type', 'headers', 'aggregate_id', 'aggregate_type', 'id'));
    const e = event(mapper.map(row('{}', '2026-01-01', 't1', 'Paid', '{"k":"v"}', 'o-9', 'order', 'e9'), TXN));
    expect(e).toMatchObject({ id: 'e9', aggregateType: 'order', aggregateId: 'o-9', eventType: 'Paid', headers: { k: 'v' }, createdAt: '2026-01-01' });
    expect(e.payload.toString()).toBe('{}');
  });

  it('names every mapped column missing from the table, and has no id when the id column is missing', () => {
    const mapper = mapperFor(relation('aggregate_type', 'aggregate_id', 'event_type', 'headers'));
    expect(mapper.map(row('order', 'o-1', 'Created', '{}'), TXN)).toEqual({
      id: null,
      reason: 'column(s) id, payload missing from public.outbox',
      table: 'public.outbox',
      txn: TXN,
    });
  });

  it('names every required column that is NULL, keeping the id', () => {
    const mapper = mapperFor(FULL);
    expect(mapper.map(row('e1', null, 'o-1', null, '{}', null, null), TXN)).toEqual({
      id: 'e1',
      reason: 'column(s) aggregate_type, event_type NULL',
      table: 'public.outbox',
      txn: TXN,
    });
    expect(malformed(mapper.map(row('e1', 'order', 'o-1', 'Created', undefined, null, null), TXN)).reason).toBe('column(s) payload NULL');
  });

  it('keeps only the string entries of the headers object', () => {
    const mapper = mapperFor(FULL);
    const e = event(
      mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', '{"trace":"abc","n":1,"flag":true,"nested":{"x":"y"},"none":null,"span":"s"}', null), TXN),
    );
    expect(e.headers).toEqual({ trace: 'abc', span: 's' });
  });

  it('treats NULL headers and JSON null headers as no headers', () => {
    const mapper = mapperFor(FULL);
    expect(event(mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', null, null), TXN)).headers).toEqual({});
    expect(event(mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', 'null', null), TXN)).headers).toEqual({});
  });

  it('reports headers that are not a JSON object as malformed, saying what they are', () => {
    const mapper = mapperFor(FULL);
    const reason = (headers: string) => malformed(mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', headers, null), TXN)).reason;
    expect(reason('{not json')).toBe('column headers is not valid JSON');
    expect(reason('["a","b"]')).toBe('column headers must be a JSON object, got an array');
    expect(reason('"text"')).toBe('column headers must be a JSON object, got string');
    expect(reason('12')).toBe('column headers must be a JSON object, got number');
    expect(malformed(mapper.map(row('e1', 'order', 'o-1', 'Created', '{}', '[]', null), TXN)).id).toBe('e1');
  });
});

describe('RowMapper created_at', () => {
  const withType = (typeOid: number): RelationColumn[] => FULL.map((c) => (c.name === 'created_at' ? { ...c, typeOid } : c));
  const createdAt = (typeOid: number, value: string) =>
    event(mapperFor(withType(typeOid)).map(row('e1', 'order', 'o-1', 'Created', '{}', null, value), TXN)).createdAt;

  it('sends a timestamptz created_at in RFC 3339 UTC with microseconds', () => {
    expect(createdAt(1184, '2026-12-01 12:27:21.69642+00')).toBe('2026-12-01T12:27:21.696420Z');
  });

  it('sends a text created_at as the row holds it', () => {
    expect(createdAt(25, '2026-12-01 12:27:21.69642+00')).toBe('2026-12-01 12:27:21.69642+00');
  });
});
