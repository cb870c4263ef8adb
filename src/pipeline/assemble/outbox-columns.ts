/**
 * The outbox table's shape as the relay reads it: which column holds what.
 * The defaults here are the table migrations/0001_outbox.sql creates; the
 * config schema, the row mapper, preflight and the write path take them from
 * here.
 */
export interface ColumnMapping {
  id: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  payload: string;
  /** Optional columns: absent from the table means "not used". */
  headers: string;
  createdAt: string;
}

export const DEFAULT_OUTBOX_TABLE = 'public.outbox';

export const DEFAULT_OUTBOX_COLUMNS: Readonly<ColumnMapping> = Object.freeze({
  id: 'id',
  aggregateType: 'aggregate_type',
  aggregateId: 'aggregate_id',
  eventType: 'event_type',
  payload: 'payload',
  headers: 'headers',
  createdAt: 'created_at',
});

export type RequiredColumn = 'id' | 'aggregateType' | 'aggregateId' | 'eventType' | 'payload';

/** Columns every outbox row must have (non-NULL); the others are optional. */
export const REQUIRED_COLUMNS: readonly RequiredColumn[] = ['id', 'aggregateType', 'aggregateId', 'eventType', 'payload'];

/** The mapping from the config's --column-* options. */
/** The --column-* options. */
export interface ColumnSettings {
  columnId: string;
  columnAggregateType: string;
  columnAggregateId: string;
  columnEventType: string;
  columnPayload: string;
  columnHeaders: string;
  columnCreatedAt: string;
}

export function columnMapping(config: ColumnSettings): ColumnMapping {
  return {
    id: config.columnId,
    aggregateType: config.columnAggregateType,
    aggregateId: config.columnAggregateId,
    eventType: config.columnEventType,
    payload: config.columnPayload,
    headers: config.columnHeaders,
    createdAt: config.columnCreatedAt,
  };
}
