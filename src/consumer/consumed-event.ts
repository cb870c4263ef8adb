import type { IHeaders, KafkaMessage } from 'kafkajs';

/**
 * One outbox event as a consumer sees it: the record the relay published
 * (src/pipeline/publish/record-format/record-builder.ts), decoded. `id` is the outbox row id, the only
 * key to deduplicate by (never the offset or the LSN).
 */
export interface ConsumedEvent<P = unknown> {
  /** Outbox row id (header `id`). */
  id: string;
  /** Header `aggregate_type`; '' when absent. */
  aggregateType: string;
  /** Header `aggregate_id`, else the record key; '' when both are absent. */
  aggregateId: string;
  /** Header `event_type`; '' when absent. */
  eventType: string;
  /** The value parsed as JSON (then through `parsePayload` when configured). */
  payload: P;
  /** The value bytes exactly as received; for a structured CloudEvent, its `data` as JSON text. */
  rawPayload: Buffer;
  /** Every header as a string (Buffers decoded as UTF-8; for repeated headers the last value). */
  headers: Record<string, string>;
  /** Header `commit_lsn` (e.g. "0/1925E80"), or null when the producer did not set it. */
  commitLsn: string | null;
  /** Header `created_at` as the relay sent it, or null. */
  createdAt: string | null;
  key: string | null;
  topic: string;
  partition: number;
  /** Kafka offset (a decimal string, as kafkajs gives it). */
  offset: string;
  /** Record timestamp, ms since the epoch, as a string. */
  timestamp: string;
}

/** Why a record cannot be turned into an event. Deterministic: retrying does not help. */
export interface PoisonRecord {
  reason: string;
  /** The outbox id when the record had one (e.g. the value is not JSON). */
  id: string | null;
  key: string | null;
  topic: string;
  partition: number;
  offset: string;
  headers: Record<string, string>;
}

export type DecodeResult<P> = { ok: true; event: ConsumedEvent<P> } | { ok: false; poison: PoisonRecord };

export interface DecodeOptions<P> {
  /** Header holding the outbox id; default `id`, or `ce_id` / the structured event's `id` for a CloudEvent. */
  idHeader?: string | undefined;
  /** Turns the parsed JSON into the handler's payload type (e.g. a zod schema's parse); a throw makes the record poison. */
  parsePayload?: ((json: unknown, event: ConsumedEvent<unknown>) => P) | undefined;
  /** Decodes the value instead of JSON.parse (the schema registry's wire format); a throw makes the record poison. */
  decodeValue?: ((value: Buffer) => unknown) | undefined;
}

export function stringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last === undefined) continue;
    out[name] = typeof last === 'string' ? last : last.toString('utf8');
  }
  return out;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a record says about its event, apart from the payload. */
interface RecordFields {
  id: string | undefined;
  aggregateType?: string | undefined;
  aggregateId?: string | undefined;
  eventType?: string | undefined;
  commitLsn?: string | undefined;
  createdAt?: string | undefined;
}

const STRUCTURED = /^application\/cloudevents\+json\s*(;|$)/i;

/**
 * The event's fields from the relay's own headers (--record-format default), or
 * from a CloudEvent (docs/cloudevents.md): `ce_` headers in binary mode, the
 * JSON document's attributes in structured mode (then `data` is the payload).
 */
function fieldsOf(headers: Record<string, string>, idHeader: string | undefined, structured: Record<string, unknown> | null): RecordFields {
  if (structured !== null) {
    const str = (k: string) => (typeof structured[k] === 'string' ? (structured[k] as string) : undefined);
    return {
      id: idHeader === undefined ? str('id') : headers[idHeader],
      aggregateType: str('aggregatetype'),
      aggregateId: str('subject'),
      eventType: str('type'),
      commitLsn: str('commitlsn'),
      createdAt: str('time'),
    };
  }
  if (idHeader === undefined && headers.id === undefined && headers.ce_id !== undefined) {
    return {
      id: headers.ce_id,
      aggregateType: headers.ce_aggregatetype,
      aggregateId: headers.ce_subject,
      eventType: headers.ce_type,
      commitLsn: headers.ce_commitlsn,
      createdAt: headers.ce_time,
    };
  }
  return {
    id: headers[idHeader ?? 'id'],
    aggregateType: headers.aggregate_type,
    aggregateId: headers.aggregate_id,
    eventType: headers.event_type,
    commitLsn: headers.commit_lsn,
    createdAt: headers.created_at,
  };
}

/** Pure: a Kafka record -> a typed event, or the reason it is poison. */
export function decodeRecord<P = unknown>(topic: string, partition: number, message: KafkaMessage, options: DecodeOptions<P> = {}): DecodeResult<P> {
  const headers = stringHeaders(message.headers);
  const key = message.key === null || message.key === undefined ? null : message.key.toString('utf8');
  const structured = STRUCTURED.test(headers['content-type'] ?? '');
  let id: string | null = null;
  const poison = (reason: string): DecodeResult<P> => ({
    ok: false,
    poison: { reason, id, key, topic, partition, offset: message.offset, headers },
  });
  const value = message.value ?? null;
  let json: unknown;
  let jsonError: unknown = null;
  if (value !== null) {
    try {
      // A structured CloudEvent is always a JSON document; otherwise the registry's decoder, when given, reads the value.
      json = options.decodeValue && !structured ? options.decodeValue(value) : JSON.parse(value.toString('utf8'));
    } catch (error) {
      jsonError = error;
    }
  }
  let document: Record<string, unknown> | null = null;
  if (structured) {
    if (value === null || jsonError !== null || json === null || typeof json !== 'object' || Array.isArray(json)) {
      return poison(`record is a structured CloudEvent (content-type ${headers['content-type']}) whose value is not a JSON object`);
    }
    document = json as Record<string, unknown>;
  }
  const f = fieldsOf(headers, options.idHeader, document);
  id = f.id === undefined || f.id.trim() === '' ? null : f.id;
  if (id === null) {
    const where = structured && options.idHeader === undefined ? 'CloudEvent "id" attribute' : `"${options.idHeader ?? 'id'}" header`;
    return poison(
      `record has no ${where} (or it is empty), so it cannot be deduplicated; it was not published by an outbox relay, or the producer dropped its headers`,
    );
  }
  if (value === null) return poison(`record for outbox id ${id} has no value (a tombstone?); outbox records always carry the payload`);
  if (jsonError !== null)
    return poison(`value of outbox id ${id} is not ${options.decodeValue && !structured ? 'decodable with its schema' : 'JSON'}: ${errorText(jsonError)}`);
  let rawPayload = value;
  if (document !== null) {
    // A structured CloudEvent's payload is its data (JSON, as the relay writes it: datacontenttype application/json).
    json = document.data ?? null;
    rawPayload = Buffer.from(JSON.stringify(json));
  }
  const event: ConsumedEvent<unknown> = {
    id,
    aggregateType: f.aggregateType ?? '',
    aggregateId: f.aggregateId ?? key ?? '',
    eventType: f.eventType ?? '',
    payload: json,
    rawPayload,
    headers,
    commitLsn: f.commitLsn ?? null,
    createdAt: f.createdAt ?? null,
    key,
    topic,
    partition,
    offset: message.offset,
    timestamp: message.timestamp,
  };
  if (options.parsePayload) {
    try {
      event.payload = options.parsePayload(json, event);
    } catch (error) {
      return poison(`payload of outbox id ${id} was rejected by parsePayload: ${errorText(error)}`);
    }
  }
  return { ok: true, event: event as ConsumedEvent<P> };
}
