import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { columnMapping, DEFAULT_OUTBOX_COLUMNS, DEFAULT_OUTBOX_TABLE, REQUIRED_COLUMNS } from '../../../../src/pipeline/assemble/outbox-columns.js';

// The outbox table's shape: one source for the config defaults, the row mapper,
// preflight's required-column check and the write path.
const migration = readFileSync(new URL('../../../../migrations/0001_outbox.sql', import.meta.url), 'utf8');

/** The column names of the CREATE TABLE in the migration, in order. */
function migrationColumns(): string[] {
  const body = /CREATE TABLE IF NOT EXISTS outbox \(([\s\S]*?)\n\);/.exec(migration)?.[1];
  if (!body) throw new Error('no CREATE TABLE outbox in migrations/0001_outbox.sql');
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => line.split(/\s+/)[0]!);
}

describe('outbox columns', () => {
  it('defaults to the table and the column names migrations/0001_outbox.sql creates', () => {
    // the migration creates `outbox` unqualified: the default search_path puts it in public
    expect(DEFAULT_OUTBOX_TABLE).toBe('public.outbox');
    expect(DEFAULT_OUTBOX_COLUMNS).toEqual({
      id: 'id',
      aggregateType: 'aggregate_type',
      aggregateId: 'aggregate_id',
      eventType: 'event_type',
      payload: 'payload',
      headers: 'headers',
      createdAt: 'created_at',
    });
    expect(Object.values(DEFAULT_OUTBOX_COLUMNS)).toEqual(migrationColumns());
    expect(Object.isFrozen(DEFAULT_OUTBOX_COLUMNS)).toBe(true);
  });

  it('requires id, aggregate type, aggregate id, event type and payload; headers and created_at are optional', () => {
    expect(REQUIRED_COLUMNS).toEqual(['id', 'aggregateType', 'aggregateId', 'eventType', 'payload']);
  });

  it('names the required columns for preflight as configured by the --column-* options', () => {
    const mapping = columnMapping({
      columnId: 'event_id',
      columnAggregateType: 'kind',
      columnAggregateId: 'entity',
      columnEventType: 'type',
      columnPayload: 'body',
      columnHeaders: 'meta',
      columnCreatedAt: 'at',
    });
    expect(mapping).toEqual({
      id: 'event_id',
      aggregateType: 'kind',
      aggregateId: 'entity',
      eventType: 'type',
      payload: 'body',
      headers: 'meta',
      createdAt: 'at',
    });
    expect(REQUIRED_COLUMNS.map((key) => mapping[key])).toEqual(['event_id', 'kind', 'entity', 'type', 'body']);
  });
});
