/**
 * The content of an outbox event written as a logical decoding message
 * (`pg_logical_emit_message(true, prefix, content)`), version 1, defined here
 * once for the relay and the TypeScript writer (docs/table-less-source.md, "Message content
 * format"; migrations/0003_emit_message.sql writes the same from SQL):
 *
 *   <envelope: one line of JSON, an object with "v": 1> LF <payload bytes>
 *
 * The payload follows the envelope as raw bytes instead of a JSON field, so the
 * relay forwards it byte for byte without parsing or re-serialising it, and a
 * writer in any language needs only a compact JSON serialiser (which never
 * emits a raw newline) and a concatenation.
 */

export const MESSAGE_CONTENT_VERSION = 1;
export const DEFAULT_MESSAGE_PREFIX = 'outbox-tail';

const LF = 0x0a;

export interface MessageEnvelope {
  id: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  /** String entries only, as from the table's headers column. */
  headers: Record<string, string>;
  createdAt: string | null;
}

export interface ParsedMessageContent {
  envelope: MessageEnvelope;
  /** A view into the content: the exact bytes the writer gave. */
  payload: Buffer;
}

export interface UnparsableContent {
  id: string | null;
  reason: string;
}

export const MessageContent = {
  /** The content for `pg_logical_emit_message`; `payload` is JSON text and is not touched. */
  encode(envelope: MessageEnvelope, payload: string | Buffer): Buffer {
    const head = JSON.stringify({
      v: MESSAGE_CONTENT_VERSION,
      id: envelope.id,
      aggregate_type: envelope.aggregateType,
      aggregate_id: envelope.aggregateId,
      event_type: envelope.eventType,
      headers: Object.keys(envelope.headers).length > 0 ? envelope.headers : null,
      created_at: envelope.createdAt,
    });
    return Buffer.concat([Buffer.from(head), Buffer.from([LF]), Buffer.from(payload)]);
  },

  /** The envelope and payload, or why the content is not a v1 outbox event (with the id when that much is readable). */
  parse(content: Buffer): ParsedMessageContent | UnparsableContent {
    const end = content.indexOf(LF);
    if (end < 0) return { id: readableId(content), reason: 'no newline after the envelope' };
    let raw: unknown;
    try {
      raw = JSON.parse(content.toString('utf8', 0, end));
    } catch {
      return { id: null, reason: 'envelope is not valid JSON' };
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { id: null, reason: 'envelope is not a JSON object' };
    const e = raw as Record<string, unknown>;
    const id = idOf(e);
    const fail = (reason: string): UnparsableContent => ({ id, reason });
    if (e.v !== MESSAGE_CONTENT_VERSION) return fail(`unsupported content version ${JSON.stringify(e.v)} (this relay reads ${MESSAGE_CONTENT_VERSION})`);
    const missing = (['id', 'aggregate_type', 'aggregate_id', 'event_type'] as const).filter((k) => typeof e[k] !== 'string' || e[k] === '');
    if (missing.length > 0) return fail(`field(s) ${missing.join(', ')} missing or not a non-empty string`);
    const headers: Record<string, string> = {};
    if (e.headers !== undefined && e.headers !== null) {
      if (typeof e.headers !== 'object' || Array.isArray(e.headers)) {
        return fail(`headers must be a JSON object, got ${Array.isArray(e.headers) ? 'an array' : typeof e.headers}`);
      }
      // As from the table's headers column: string entries only.
      for (const [k, v] of Object.entries(e.headers as Record<string, unknown>)) if (typeof v === 'string') headers[k] = v;
    }
    if (e.created_at !== undefined && e.created_at !== null && typeof e.created_at !== 'string') return fail('created_at must be a string');
    const payload = content.subarray(end + 1);
    // The table path's payload is jsonb, so always JSON: consumers may rely on that whichever way the event was written.
    try {
      JSON.parse(payload.toString('utf8'));
    } catch {
      return fail('payload is not valid JSON');
    }
    return {
      envelope: {
        id: e.id as string,
        aggregateType: e.aggregate_type as string,
        aggregateId: e.aggregate_id as string,
        eventType: e.event_type as string,
        headers,
        createdAt: (e.created_at as string | null | undefined) ?? null,
      },
      payload,
    };
  },
};

/** Best effort, for the operator: the id of an envelope sent without its payload line. */
function readableId(content: Buffer): string | null {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch {
    // Not JSON: `value` stays undefined, which has no id.
  }
  return idOf(value);
}

/** The id a refusal names: a non-empty string, or none (an array, a number or a string has no `id`). */
function idOf(value: unknown): string | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id !== '' ? id : null;
}
