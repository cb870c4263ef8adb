import type { ColumnValue, RelationColumn } from '../decode/pgoutput-decoder.js';
import type { MalformedRow, OutboxEvent, Transaction } from '../outbox-event.js';
import { toRfc3339 } from './rfc3339-timestamp.js';
import { REQUIRED_COLUMNS as REQUIRED, type ColumnMapping, type RequiredColumn as Required } from './outbox-columns.js';

interface Layout {
  index: Record<Required, number>;
  headers: number;
  createdAt: number;
  createdAtType: number;
  /** The payload must be parsed as JSON: a record format embeds it, and its column type does not make it JSON. */
  checkPayload: boolean;
  missing: string[];
}

/** json and jsonb: PostgreSQL accepted the value as JSON and sends it as JSON text. */
const JSON_TYPE_OIDS: ReadonlySet<number> = new Set([114, 3802]);

/**
 * Maps the INSERT tuple of the outbox table to an OutboxEvent, by column name
 * from the latest Relation message, so `ALTER TABLE` mid-stream is handled
 * (docs/architecture.md#lsn-rules, rule 15). A row that cannot be mapped becomes a MalformedRow
 * carrying its id when that much is readable; it is never dropped silently.
 */
export class RowMapper {
  private layout: Layout | null = null;

  constructor(
    private readonly columns: ColumnMapping,
    readonly table: string,
    /** jsonPayload: the record format embeds the payload in a JSON document (embedsPayload), so it must be JSON. */
    private readonly options: { jsonPayload?: boolean } = {},
  ) {}

  onRelation(columns: readonly RelationColumn[]): void {
    const position = new Map(columns.map((c, i) => [c.name, i]));
    const index = {} as Record<Required, number>;
    const missing: string[] = [];
    for (const key of REQUIRED) {
      const at = position.get(this.columns[key]);
      if (at === undefined) missing.push(this.columns[key]);
      index[key] = at ?? -1;
    }
    this.layout = {
      index,
      headers: position.get(this.columns.headers) ?? -1,
      createdAt: position.get(this.columns.createdAt) ?? -1,
      createdAtType: columns[position.get(this.columns.createdAt) ?? -1]?.typeOid ?? 0,
      // Decided per Relation: the jsonb payload of the usual table is never parsed.
      checkPayload: this.options.jsonPayload === true && !JSON_TYPE_OIDS.has(columns[index.payload]?.typeOid ?? 0),
      missing,
    };
  }

  map(values: readonly ColumnValue[], txn: Transaction): OutboxEvent | MalformedRow {
    const layout = this.layout;
    if (!layout) {
      return { id: null, reason: `INSERT on ${this.table} before its Relation message`, table: this.table, txn };
    }
    const text = (at: number): string | null | undefined => {
      if (at < 0) return undefined;
      const v = values[at];
      return v == null ? (v as null | undefined) : v.toString('utf8');
    };
    const id = text(layout.index.id) ?? null;
    if (layout.missing.length > 0) {
      return { id, reason: `column(s) ${layout.missing.join(', ')} missing from ${this.table}`, table: this.table, txn };
    }
    const nulls = REQUIRED.filter((key) => values[layout.index[key]] == null).map((key) => this.columns[key]);
    if (nulls.length > 0) {
      return { id, reason: `column(s) ${nulls.join(', ')} NULL`, table: this.table, txn };
    }
    if (layout.checkPayload && !isJson(values[layout.index.payload] as Buffer)) {
      const reason = `column ${this.columns.payload} is not valid JSON (its type is not json or jsonb, and --record-format cloudevents-structured embeds it in the event)`;
      return { id, reason, table: this.table, txn };
    }
    let headers: Record<string, string> = {};
    const rawHeaders = text(layout.headers);
    if (rawHeaders != null) {
      const parsed = parseHeaders(rawHeaders);
      if (typeof parsed === 'string') return { id, reason: `column ${this.columns.headers} ${parsed}`, table: this.table, txn };
      headers = parsed;
    }
    const createdAt = text(layout.createdAt);
    return {
      id: id!,
      aggregateType: text(layout.index.aggregateType)!,
      aggregateId: text(layout.index.aggregateId)!,
      eventType: text(layout.index.eventType)!,
      payload: values[layout.index.payload] as Buffer,
      headers,
      createdAt: createdAt == null ? null : toRfc3339(createdAt, layout.createdAtType),
      table: this.table,
      txn,
    };
  }
}

export function isMalformed(row: OutboxEvent | MalformedRow): row is MalformedRow {
  return 'reason' in row;
}

function isJson(payload: Buffer): boolean {
  try {
    JSON.parse(payload.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/** Returns the string entries, or a reason when the value is not a JSON object. */
function parseHeaders(raw: string): Record<string, string> | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'is not valid JSON';
  }
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return `must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}`;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}
