import type { OutboxEvent } from '../outbox/outbox-event.js';
import { RecordBuilder } from './record-builder.js';
import type { RecordHeaderName } from './record-headers.js';
import type { SinkRecord } from './sink-record.js';

const RECORD_OVERHEAD = 70;
const SPEC_VERSION = '1.0';
/** The payload column is jsonb and a message's payload is checked to be JSON: data is always JSON. */
const DATA_CONTENT_TYPE = 'application/json';
export const STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json';
// CloudEvents `time` is an RFC 3339 timestamp: created_at is one unless the row holds `infinity`, a BC date or a year past 9999.
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/;

/**
 * Records as CloudEvents 1.0 per the Kafka protocol binding (docs/cloudevents.md):
 * `binary` puts the attributes in `ce_` headers and the payload, untouched, in
 * the value; `structured` writes one `application/cloudevents+json` document
 * whose `data` is the payload (spliced in as text, never re-serialised).
 *
 * Attributes: id = outbox id, type = event_type, source = --cloudevents-source,
 * subject = aggregate id, time = created_at, and the extensions `aggregatetype`
 * and `commitlsn` (CloudEvents extension names are lowercase letters and
 * digits only). --record-headers still chooses the optional ones: id and type
 * are required by CloudEvents and always sent. The key stays the aggregate id.
 * Dead-letter pointer records keep the outbox-tail layout (inherited).
 */
export class CloudEventsRecordBuilder extends RecordBuilder {
  private readonly sourceFor: (event: OutboxEvent) => string;
  private readonly send: ReadonlySet<RecordHeaderName>;

  constructor(
    topicTemplate: string,
    headerNames: readonly RecordHeaderName[],
    private readonly mode: 'binary' | 'structured',
    sourceTemplate: string,
  ) {
    super(topicTemplate, headerNames);
    this.send = new Set(headerNames);
    this.sourceFor = compileSourceTemplate(sourceTemplate);
  }

  override build(event: OutboxEvent): SinkRecord {
    const attributes = this.attributesOf(event);
    const topic = this.topicFor(event);
    const key = event.aggregateId;
    const headers: Record<string, string> = { ...event.headers };
    let value: Buffer;
    if (this.mode === 'binary') {
      for (const name in attributes) headers[`ce_${name}`] = attributes[name]!;
      headers['content-type'] = DATA_CONTENT_TYPE;
      value = event.payload;
    } else {
      headers['content-type'] = STRUCTURED_CONTENT_TYPE;
      // The payload is JSON text already: splice it in as `data` rather than parse and re-serialise it.
      const head = JSON.stringify({ ...attributes, datacontenttype: DATA_CONTENT_TYPE });
      value = Buffer.concat([Buffer.from(`${head.slice(0, -1)},"data":`), event.payload, CLOSE_BRACE]);
    }
    let bytes = RECORD_OVERHEAD + value.length + key.length;
    for (const k in headers) bytes += k.length + headers[k]!.length + 2;
    return { topic, key, value, headers, bytes };
  }

  /** The context attributes, in the order the spec lists them; optional ones only when --record-headers asks and the value is valid. */
  private attributesOf(event: OutboxEvent): Record<string, string> {
    const a: Record<string, string> = { specversion: SPEC_VERSION, id: event.id, source: this.sourceFor(event), type: event.eventType };
    // CloudEvents: subject, when present, is a non-empty string.
    if (this.send.has('aggregate_id') && event.aggregateId !== '') a.subject = event.aggregateId;
    if (this.send.has('created_at') && event.createdAt !== null && RFC3339.test(event.createdAt)) a.time = event.createdAt;
    if (this.send.has('aggregate_type') && event.aggregateType !== '') a.aggregatetype = event.aggregateType;
    if (this.send.has('commit_lsn')) a.commitlsn = this.commitLsnOf(event.txn);
    return a;
  }
}

const CLOSE_BRACE = Buffer.from('}');

/**
 * `--cloudevents-source`: `{table}` (the "schema.table", or the message
 * prefix of an event written with outbox_tail.emit) and `{aggregate_type}`
 * are replaced per record, percent-encoded so the result stays a URI reference.
 */
export function compileSourceTemplate(template: string): (event: OutboxEvent) => string {
  const parts = template.split(/(\{aggregate_type\}|\{table\})/);
  if (parts.length === 1) return () => template;
  const cache = new Map<string, string>();
  return (event) => {
    const k = `${event.table}\u0000${event.aggregateType}`;
    let source = cache.get(k);
    if (source === undefined) {
      source = '';
      for (const part of parts) {
        if (part === '{table}') source += encodeURIComponent(event.table);
        else if (part === '{aggregate_type}') source += encodeURIComponent(event.aggregateType);
        else source += part;
      }
      // A stream has few tables and aggregate types; bounded anyway.
      if (cache.size >= 1024) cache.clear();
      cache.set(k, source);
    }
    return source;
  };
}
