import { Kafka, type CloudEventV1, type KafkaMessage } from 'cloudevents';
import type { KafkaMessage as KafkaJsMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../../src/config/resolve-config.js';
import { decodeRecord } from '../../../../src/consumer/consumed-event.js';
import type { OutboxEvent } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { CloudEventsRecordBuilder, compileSourceTemplate } from '../../../../src/pipeline/publish/record-format/cloudevents-format.js';
import { createRecordBuilder } from '../../../../src/pipeline/publish/record-format/create-record-builder.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import { RECORD_HEADER_NAMES } from '../../../../src/pipeline/publish/record-format/record-headers.js';
import type { SinkRecord } from '../../../../src/sink/sink-record.js';

const event = (over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: '6f1c0f6e-7c1e-4a37-9f43-1c2b3d4e5f60',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'OrderCreated',
  // jsonb text, whitespace and key order as PostgreSQL sent them
  payload: Buffer.from('{"a": 1, "nested": {"ü": [true, null]}}'),
  headers: { tenant: 'acme' },
  createdAt: '2026-11-30T08:15:42.123456Z',
  table: 'public.outbox',
  txn: { seq: 1, xid: 7, commitLsn: Lsn.of(0x1925e80n), commitTime: 0n, endLsn: null },
  ...over,
});

const binary = (headers = RECORD_HEADER_NAMES as readonly (typeof RECORD_HEADER_NAMES)[number][], source = '/outbox-tail/{table}') =>
  new CloudEventsRecordBuilder('outbox.event.{aggregate_type}', headers, 'binary', source);
const structured = (headers = RECORD_HEADER_NAMES as readonly (typeof RECORD_HEADER_NAMES)[number][], source = '/outbox-tail/{table}') =>
  new CloudEventsRecordBuilder('outbox.event.{aggregate_type}', headers, 'structured', source);

/** The record through the cloudevents SDK's Kafka binding, validated against the spec (the binding itself does not validate). */
function parse(r: SinkRecord): CloudEventV1<unknown> {
  const e = Kafka.toEvent({ key: r.key, value: r.value, headers: r.headers, body: r.value } as KafkaMessage) as CloudEventV1<unknown> & { validate(): boolean };
  expect(e.validate()).toBe(true);
  return e;
}

/** As kafkajs hands a record to the consumer. */
const asConsumed = (r: SinkRecord): KafkaJsMessage =>
  ({
    key: Buffer.from(r.key),
    value: r.value,
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Buffer.from(v)])),
    offset: '5',
    timestamp: '0',
    attributes: 0,
    size: 0,
  }) as unknown as KafkaJsMessage;

describe('CloudEvents binary mode', () => {
  it('puts the attributes in ce_ headers, keeps the payload bytes as the value and the aggregate id as the key', () => {
    const e = event();
    const r = binary().build(e);
    expect(r.topic).toBe('outbox.event.order');
    expect(r.key).toBe('o-1');
    expect(r.value).toBe(e.payload);
    expect(r.headers).toEqual({
      tenant: 'acme',
      ce_specversion: '1.0',
      ce_id: e.id,
      ce_source: '/outbox-tail/public.outbox',
      ce_type: 'OrderCreated',
      ce_subject: 'o-1',
      ce_time: '2026-11-30T08:15:42.123456Z',
      ce_aggregatetype: 'order',
      ce_commitlsn: '0/1925E80',
      'content-type': 'application/json',
    });
    const ce = parse(r);
    expect(ce).toMatchObject({ specversion: '1.0', id: e.id, source: '/outbox-tail/public.outbox', type: 'OrderCreated', subject: 'o-1' });
    expect(ce.datacontenttype).toBe('application/json');
    expect(ce.data).toEqual({ a: 1, nested: { ü: [true, null] } });
    expect(new Date(ce.time!).toISOString()).toBe('2026-11-30T08:15:42.123Z');
  });

  it('is checked for real: the SDK rejects a record without its type or with an unknown specversion', () => {
    const r = binary().build(event());
    const { ce_type: _type, ...noType } = r.headers;
    expect(() => parse({ ...r, headers: noType })).toThrow();
    expect(() => parse({ ...r, headers: { ...r.headers, ce_specversion: '0.1' } })).toThrow();
  });

  it('counts every header and the value in the record size', () => {
    const r = binary().build(event());
    let expected = 70 + r.value.length + r.key.length;
    for (const [k, v] of Object.entries(r.headers)) expected += k.length + v.length + 2;
    expect(r.bytes).toBe(expected);
  });

  it('lets our attributes and content-type win over same-named user headers', () => {
    const r = binary().build(event({ headers: { ce_id: 'spoofed', 'content-type': 'text/plain', ce_traceparent: '00-abc-def-01' } }));
    expect(r.headers.ce_id).toBe('6f1c0f6e-7c1e-4a37-9f43-1c2b3d4e5f60');
    expect(r.headers['content-type']).toBe('application/json');
    // A user header named ce_<name> is an extension attribute in binary mode.
    expect(parse(r)).toMatchObject({ traceparent: '00-abc-def-01' });
  });
});

describe('CloudEvents structured mode', () => {
  it('writes one application/cloudevents+json document whose data is the payload', () => {
    const e = event();
    const r = structured().build(e);
    expect(r.key).toBe('o-1');
    expect(r.headers).toEqual({ tenant: 'acme', 'content-type': 'application/cloudevents+json' });
    expect(JSON.parse(r.value.toString())).toEqual({
      specversion: '1.0',
      id: e.id,
      source: '/outbox-tail/public.outbox',
      type: 'OrderCreated',
      subject: 'o-1',
      time: '2026-11-30T08:15:42.123456Z',
      aggregatetype: 'order',
      commitlsn: '0/1925E80',
      datacontenttype: 'application/json',
      data: { a: 1, nested: { ü: [true, null] } },
    });
    // data is the payload text spliced in, byte for byte.
    expect(r.value.toString()).toContain(`"data":${e.payload.toString()}}`);
    const ce = parse(r);
    expect(ce).toMatchObject({ id: e.id, type: 'OrderCreated', subject: 'o-1', data: { a: 1, nested: { ü: [true, null] } } });
  });

  it('escapes attribute values that need it and keeps a payload that is a JSON scalar or array', () => {
    const r = structured().build(event({ eventType: 'Order "Created"\n', aggregateId: 'a\\b\u0001ü', payload: Buffer.from('[1, "two"]') }));
    expect(JSON.parse(r.value.toString())).toMatchObject({ type: 'Order "Created"\n', subject: 'a\\b\u0001ü', data: [1, 'two'] });
  });
});

describe('CloudEvents attributes', () => {
  it('sends only the optional attributes --record-headers asks for; id and type always', () => {
    const r = binary(['id']).build(event());
    expect(Object.keys(r.headers).sort()).toEqual(['ce_id', 'ce_source', 'ce_specversion', 'ce_type', 'content-type', 'tenant']);
    expect(Object.keys(JSON.parse(structured(['id', 'created_at']).build(event()).value.toString())).sort()).toEqual([
      'data',
      'datacontenttype',
      'id',
      'source',
      'specversion',
      'time',
      'type',
    ]);
  });

  it('leaves out a time that is not RFC 3339 and a subject that is empty, which CloudEvents forbids, rather than send an invalid event', () => {
    for (const createdAt of ['infinity', '2026-11-30 08:15:42+00', null]) {
      const r = binary().build(event({ createdAt, aggregateId: '' }));
      expect(r.headers.ce_time).toBeUndefined();
      expect(r.headers.ce_subject).toBeUndefined();
      parse(r);
    }
  });

  it('keeps an RFC 3339 time with an offset, as outbox_tail.emit may write it', () => {
    const r = binary().build(event({ createdAt: '2026-11-30T09:15:42.5+01:00', table: 'outbox' }));
    expect(r.headers.ce_time).toBe('2026-11-30T09:15:42.5+01:00');
    expect(r.headers.ce_source).toBe('/outbox-tail/outbox');
    expect(new Date(parse(r).time!).toISOString()).toBe('2026-11-30T08:15:42.500Z');
  });

  it('fills the source template per record, percent-encoding the substituted values', () => {
    const source = compileSourceTemplate('//orders.example.com/{table}/{aggregate_type}');
    expect(source(event())).toBe('//orders.example.com/public.outbox/order');
    expect(source(event({ aggregateType: 'a b/c' }))).toBe('//orders.example.com/public.outbox/a%20b%2Fc');
    expect(compileSourceTemplate('urn:orders')(event())).toBe('urn:orders');
    expect(parse(binary(undefined, '/db/{aggregate_type}').build(event({ aggregateType: 'a b' }))).source).toBe('/db/a%20b');
  });

  it('keeps the default record format the outbox-tail layout', () => {
    const settings = { topic: 't', recordHeaders: RECORD_HEADER_NAMES, cloudeventsSource: '/x' };
    expect(createRecordBuilder({ ...settings, recordFormat: 'default' })).not.toBeInstanceOf(CloudEventsRecordBuilder);
    expect(createRecordBuilder({ ...settings, recordFormat: 'default' }).build(event())).toEqual(new RecordBuilder('t').build(event()));
    expect(createRecordBuilder({ ...settings, recordFormat: 'cloudevents-binary' }).build(event()).headers.ce_source).toBe('/x');
    expect(createRecordBuilder({ ...settings, recordFormat: 'cloudevents-structured' }).build(event()).headers['content-type']).toBe(
      'application/cloudevents+json',
    );
  });

  it('is off by default and configured by --record-format and --cloudevents-source, whose placeholders are checked', () => {
    expect(resolveConfig({})).toMatchObject({ recordFormat: 'default', cloudeventsSource: '/outbox-tail/{table}' });
    const env = { OUTBOX_TAIL_RECORD_FORMAT: 'cloudevents-structured', OUTBOX_TAIL_CLOUDEVENTS_SOURCE: '//db1/{table}/{aggregate_type}' };
    expect(resolveConfig({ env })).toMatchObject({ recordFormat: 'cloudevents-structured', cloudeventsSource: '//db1/{table}/{aggregate_type}' });
    expect(() => resolveConfig({ env: { OUTBOX_TAIL_RECORD_FORMAT: 'cloudevents' } })).toThrow(/record-format|RECORD_FORMAT/i);
    expect(() => resolveConfig({ env: { OUTBOX_TAIL_CLOUDEVENTS_SOURCE: '/{database}/{table}' } })).toThrow(/unknown placeholder/);
  });

  it('keeps dead-letter pointers in the outbox-tail layout', () => {
    const e = event();
    const r = structured().deadLetter({ id: e.id, table: e.table, txn: e.txn }, 'too large', 'outbox.event.order', 'dlq');
    expect(r.headers).toEqual({ reason: 'too large', commit_lsn: '0/1925E80', id: e.id });
  });
});

describe('the idempotent consumer reads CloudEvents records', () => {
  for (const [mode, build] of [
    ['binary', binary],
    ['structured', structured],
  ] as const) {
    it(`decodes a ${mode} record to the same event as the default layout`, () => {
      const e = event();
      const decoded = decodeRecord('outbox.event.order', 0, asConsumed(build().build(e)));
      const reference = decodeRecord('outbox.event.order', 0, asConsumed(new RecordBuilder('outbox.event.{aggregate_type}').build(e)));
      expect(decoded.ok && reference.ok).toBe(true);
      if (!decoded.ok || !reference.ok) return;
      const pick = (x: typeof decoded.event) => ({
        id: x.id,
        aggregateType: x.aggregateType,
        aggregateId: x.aggregateId,
        eventType: x.eventType,
        payload: x.payload,
        commitLsn: x.commitLsn,
        createdAt: x.createdAt,
        key: x.key,
      });
      expect(pick(decoded.event)).toEqual(pick(reference.event));
      expect(JSON.parse(decoded.event.rawPayload.toString())).toEqual(JSON.parse(e.payload.toString()));
    });
  }

  it('calls a structured record without an id, or whose value is not a JSON object, poison', () => {
    const noId = asConsumed({ ...structured().build(event()), value: Buffer.from('{"type":"X","data":{}}') });
    expect(decodeRecord('t', 0, noId)).toMatchObject({ ok: false, poison: { id: null, reason: expect.stringMatching(/no CloudEvent "id" attribute/) } });
    const notJson = asConsumed({ ...structured().build(event()), value: Buffer.from('[1]') });
    expect(decodeRecord('t', 0, notJson)).toMatchObject({ ok: false, poison: { reason: expect.stringMatching(/structured CloudEvent .* not a JSON object/) } });
  });

  it('still prefers the relay id header, and a custom id header, over ce_id', () => {
    const r = binary().build(event());
    const both = asConsumed({ ...r, headers: { ...r.headers, id: 'from-id', mine: 'from-mine' } });
    expect(decodeRecord('t', 0, both)).toMatchObject({ ok: true, event: { id: 'from-id' } });
    expect(decodeRecord('t', 0, both, { idHeader: 'mine' })).toMatchObject({ ok: true, event: { id: 'from-mine' } });
  });
});
