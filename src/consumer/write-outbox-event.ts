import { randomUUID } from 'node:crypto';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { DEFAULT_MESSAGE_PREFIX, MessageContent } from '../pipeline/assemble/message-content.js';
import { DEFAULT_OUTBOX_COLUMNS as RELAY_COLUMNS, DEFAULT_OUTBOX_TABLE, type ColumnMapping } from '../pipeline/assemble/outbox-columns.js';
import { shardOfSql } from '../shared/shard-spec.js';
import type { Queryable } from './processed-messages.js';
import { quoteIdentifier, quoteTableName } from './sql.js';
import { otelApiIfRegistered, traceHeadersOf, type OtelApiModule } from '../observability/tracing/trace-context.js';

export interface OutboxEventInput {
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  /** An object (serialised with JSON.stringify) or a string that already holds JSON text. */
  payload: unknown;
  /**
   * String headers, published as Kafka headers next to the relay's own (id, event_type, ...).
   * writeOutboxEvent adds `traceparent`, `tracestate` and `baggage` of the active OpenTelemetry
   * context when there is one (docs/tracing.md); a header given here wins.
   */
  headers?: Record<string, string>;
  /** The outbox id; default: a random UUID. */
  id?: string;
}

/** The columns the write path fills: the relay's mapping without created_at (the table's default sets it). */
export type OutboxColumns = Omit<ColumnMapping, 'createdAt'>;

export interface WriteOutboxEventOptions {
  /**
   * "table" (default): an INSERT into the outbox table. "message": a
   * transactional logical decoding message (relay --source messages|both), no
   * table involved; the payload text reaches Kafka unchanged (not normalised by jsonb).
   */
  via?: 'table' | 'message';
  /** via "message": the prefix, the relay's --message-prefix; default `outbox-tail`. */
  messagePrefix?: string;
  /**
   * via "message", a sharded outbox (outbox-tail init --shards N): the event
   * goes to prefix `<messagePrefix>_<i>`, i the key's shard computed by
   * PostgreSQL (hashtext, as the row filters and outbox_tail.emit do).
   */
  shards?: number;
  /** "table" or "schema.table"; default `public.outbox` (the relay's default). */
  table?: string;
  /** Column names; defaults as in the relay's config (id, aggregate_type, aggregate_id, event_type, payload, headers). */
  columns?: Partial<OutboxColumns>;
}

export { DEFAULT_OUTBOX_TABLE };
const { createdAt: _createdAt, ...writtenColumns } = RELAY_COLUMNS;
export const DEFAULT_OUTBOX_COLUMNS: Readonly<OutboxColumns> = Object.freeze(writtenColumns);

function invalid(message: string): OutboxTailError {
  return new OutboxTailError('MALFORMED_ROW', `writeOutboxEvent: ${message}`);
}

/** Validates the input; returns the payload as JSON text. */
function checkedPayload(event: OutboxEventInput): string {
  for (const field of ['aggregateType', 'aggregateId', 'eventType'] as const) {
    if (typeof event[field] !== 'string' || event[field].length === 0) throw invalid(`${field} must be a non-empty string`);
  }
  if (event.id !== undefined && (typeof event.id !== 'string' || event.id.length === 0)) throw invalid('id must be a non-empty string when given');
  let payload: string;
  if (typeof event.payload === 'string') {
    payload = event.payload;
  } else {
    const text = JSON.stringify(event.payload);
    if (text === undefined) throw invalid('payload is not JSON-serialisable (undefined, a function or a symbol)');
    payload = text;
  }
  if (event.headers !== undefined) {
    if (event.headers === null || typeof event.headers !== 'object' || Array.isArray(event.headers)) throw invalid('headers must be an object of strings');
    for (const [k, v] of Object.entries(event.headers)) {
      // The relay publishes only string entries: refuse the others rather than drop them silently.
      if (typeof v !== 'string') throw invalid(`header ${JSON.stringify(k)} must be a string (got ${typeof v})`);
    }
  }
  return payload;
}

/** Pure: validates the input and builds the INSERT. Exported for tests. */
export function buildOutboxInsert(event: OutboxEventInput, options: WriteOutboxEventOptions = {}): { sql: string; values: unknown[]; id: string } {
  const payload = checkedPayload(event);
  const columns = { ...DEFAULT_OUTBOX_COLUMNS, ...options.columns };
  const id = event.id ?? randomUUID();
  const names = [columns.id, columns.aggregateType, columns.aggregateId, columns.eventType, columns.payload];
  const values: unknown[] = [id, event.aggregateType, event.aggregateId, event.eventType, payload];
  const placeholders = ['$1', '$2', '$3', '$4', '$5::jsonb'];
  if (event.headers !== undefined) {
    names.push(columns.headers);
    values.push(JSON.stringify(event.headers));
    placeholders.push('$6::jsonb');
  }
  const sql = `insert into ${quoteTableName(options.table ?? DEFAULT_OUTBOX_TABLE)} (${names.map(quoteIdentifier).join(', ')}) values (${placeholders.join(', ')})`;
  return { sql, values, id };
}

/** Pure: validates the input and builds the pg_logical_emit_message call (content format v1). Exported for tests. */
export function buildOutboxMessage(event: OutboxEventInput, options: WriteOutboxEventOptions = {}): { sql: string; values: unknown[]; id: string } {
  const payload = checkedPayload(event);
  // The table path gets this check from the jsonb cast; without one the relay would dead-letter or halt on it later.
  try {
    JSON.parse(payload);
  } catch {
    throw invalid('payload must be JSON text (a string payload is sent as given); pass an object to have it serialised');
  }
  const id = event.id ?? randomUUID();
  const content = MessageContent.encode(
    {
      id,
      aggregateType: event.aggregateType,
      aggregateId: event.aggregateId,
      eventType: event.eventType,
      headers: event.headers ?? {},
      createdAt: new Date().toISOString(),
    },
    payload,
  );
  const prefix = options.messagePrefix ?? DEFAULT_MESSAGE_PREFIX;
  const { shards } = options;
  if (shards !== undefined) {
    if (!Number.isInteger(shards) || shards < 1) throw invalid('shards must be a whole number >= 1 when given');
    // The shard is computed by the database, with the same expression as the publications' row filters.
    return {
      sql: `select pg_logical_emit_message(true, $1::text || '_' || ${shardOfSql('$3::text', '$4::int')}, $2::bytea)`,
      values: [prefix, content, event.aggregateId, shards],
      id,
    };
  }
  // bytea, not text: no conversion to the database encoding, so the payload bytes arrive as given.
  return { sql: 'select pg_logical_emit_message(true, $1::text, $2::bytea)', values: [prefix, content], id };
}

/** The event with the active span's W3C trace context and baggage in its headers (the caller's own headers win). */
function withTraceContext(event: OutboxEventInput, api: OtelApiModule): OutboxEventInput {
  const own: unknown = event.headers;
  // Headers that are not an object are refused by the validation as given, not hidden by a merge.
  if (own !== undefined && (own === null || typeof own !== 'object' || Array.isArray(own))) return event;
  const trace = traceHeadersOf(api, api.context.active());
  for (const _ in trace) return { ...event, headers: { ...trace, ...event.headers } };
  return event;
}

/**
 * Writes one outbox event with the caller's client (a row, or with `via:
 * 'message'` a transactional logical decoding message), so it commits or
 * rolls back with the caller's business change: call it between BEGIN and COMMIT. The
 * relay publishes the row once the transaction commits. Returns the id.
 */
export async function writeOutboxEvent(tx: Queryable, input: OutboxEventInput, options: WriteOutboxEventOptions = {}): Promise<string> {
  const api = otelApiIfRegistered();
  const event = api === null ? input : withTraceContext(input, await api);
  const message = options.via === 'message';
  const { sql, values, id } = message ? buildOutboxMessage(event, options) : buildOutboxInsert(event, options);
  try {
    await tx.query(sql, values);
  } catch (error) {
    const e = error as { code?: string; message?: string };
    const what = message ? 'emitting a logical decoding message' : `inserting into ${options.table ?? DEFAULT_OUTBOX_TABLE}`;
    throw new OutboxTailError('PG_ERROR', `writeOutboxEvent: ${what}: ${e.message ?? String(error)}`, {
      cause: error,
      ...(e.code === '42P01' ? { hint: 'create the outbox table (outbox-tail init) or pass the right `table`' } : {}),
      ...(e.code === '22P02' ? { hint: 'a string payload must hold JSON text; pass an object to have it serialised' } : {}),
    });
  }
  return id;
}
