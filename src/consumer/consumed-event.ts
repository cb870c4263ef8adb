import type { IHeaders, KafkaMessage } from 'kafkajs';

/**
 * One outbox event as a consumer sees it: the record the relay published
 * (src/record-format/record-builder.ts), decoded. `id` is the outbox row id, the only
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
  /** The value bytes exactly as received. */
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
  /** Header holding the outbox id; default `id`. */
  idHeader?: string;
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

/** Pure: a Kafka record -> a typed event, or the reason it is poison. */
export function decodeRecord<P = unknown>(topic: string, partition: number, message: KafkaMessage, options: DecodeOptions<P> = {}): DecodeResult<P> {
  const idHeader = options.idHeader ?? 'id';
  const headers = stringHeaders(message.headers);
  const key = message.key === null || message.key === undefined ? null : message.key.toString('utf8');
  const rawId = headers[idHeader];
  const id = rawId === undefined || rawId.trim() === '' ? null : rawId;
  const poison = (reason: string): DecodeResult<P> => ({
    ok: false,
    poison: { reason, id, key, topic, partition, offset: message.offset, headers },
  });
  if (id === null) {
    return poison(
      `record has no "${idHeader}" header (or it is empty), so it cannot be deduplicated; it was not published by an outbox relay, or the producer dropped its headers`,
    );
  }
  if (message.value === null || message.value === undefined) {
    return poison(`record for outbox id ${id} has no value (a tombstone?); outbox records always carry the payload`);
  }
  const rawPayload = message.value;
  let json: unknown;
  try {
    json = options.decodeValue ? options.decodeValue(rawPayload) : JSON.parse(rawPayload.toString('utf8'));
  } catch (error) {
    return poison(`value of outbox id ${id} is not ${options.decodeValue ? 'decodable with its schema' : 'JSON'}: ${errorText(error)}`);
  }
  const event: ConsumedEvent<unknown> = {
    id,
    aggregateType: headers.aggregate_type ?? '',
    aggregateId: headers.aggregate_id ?? key ?? '',
    eventType: headers.event_type ?? '',
    payload: json,
    rawPayload,
    headers,
    commitLsn: headers.commit_lsn ?? null,
    createdAt: headers.created_at ?? null,
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
