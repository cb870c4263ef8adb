import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { decodeRecord, stringHeaders } from '../../../src/consumer/consumed-event.js';

function message(over: Partial<KafkaMessage> & { headers?: KafkaMessage['headers'] } = {}): KafkaMessage {
  return {
    key: Buffer.from('order-1'),
    value: Buffer.from('{"total":12.5}'),
    timestamp: '1764460800000',
    attributes: 0,
    offset: '41',
    size: 0,
    headers: {
      id: Buffer.from('6f1c0f6e-7c1e-4a37-9f43-1c2b3d4e5f60'),
      event_type: Buffer.from('OrderPlaced'),
      aggregate_type: Buffer.from('order'),
      aggregate_id: Buffer.from('order-1'),
      created_at: Buffer.from('2026-11-30T00:00:00.000000Z'),
      commit_lsn: Buffer.from('0/1925E80'),
      tenant: Buffer.from('acme'),
    },
    ...over,
  } as unknown as KafkaMessage;
}

describe('decodeRecord', () => {
  it('maps the relay headers to a typed event and keeps the raw value bytes', () => {
    const result = decodeRecord('outbox.event.order', 3, message());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      id: '6f1c0f6e-7c1e-4a37-9f43-1c2b3d4e5f60',
      aggregateType: 'order',
      aggregateId: 'order-1',
      eventType: 'OrderPlaced',
      payload: { total: 12.5 },
      commitLsn: '0/1925E80',
      createdAt: '2026-11-30T00:00:00.000000Z',
      key: 'order-1',
      topic: 'outbox.event.order',
      partition: 3,
      offset: '41',
      timestamp: '1764460800000',
    });
    expect(result.event.headers.tenant).toBe('acme');
    expect(result.event.rawPayload.toString()).toBe('{"total":12.5}');
  });

  it('falls back to the key for the aggregate id and to null for a missing commit_lsn', () => {
    const result = decodeRecord('t', 0, message({ key: Buffer.from('k-9'), headers: { id: 'abc' } }));
    expect(result.ok && result.event).toMatchObject({ id: 'abc', aggregateId: 'k-9', aggregateType: '', eventType: '', commitLsn: null, createdAt: null });
  });

  it('calls a record without an id header poison, with a reason that names the header', () => {
    const result = decodeRecord('t', 1, message({ headers: { event_type: 'X' } }));
    expect(result).toEqual({
      ok: false,
      poison: expect.objectContaining({ id: null, topic: 't', partition: 1, offset: '41', reason: expect.stringMatching(/^record has no "id" header/) }),
    });
  });

  it('treats an empty id as missing and honours a custom id header', () => {
    expect(decodeRecord('t', 0, message({ headers: { id: '  ' } })).ok).toBe(false);
    const custom = decodeRecord('t', 0, message({ headers: { eventId: 'e-1' } }), { idHeader: 'eventId' });
    expect(custom.ok && custom.event.id).toBe('e-1');
  });

  it('calls a tombstone or a value that is not JSON poison, keeping the id for the dead letter', () => {
    const tomb = decodeRecord('t', 0, message({ value: null }));
    expect(!tomb.ok && tomb.poison).toMatchObject({ id: '6f1c0f6e-7c1e-4a37-9f43-1c2b3d4e5f60', reason: expect.stringContaining('no value') });
    const bad = decodeRecord('t', 0, message({ value: Buffer.from('{"a":') }));
    expect(!bad.ok && bad.poison.reason).toMatch(/is not JSON/);
  });

  it('runs parsePayload and turns its throw into a poison reason', () => {
    const ok = decodeRecord<number>('t', 0, message(), { parsePayload: (j) => (j as { total: number }).total * 2 });
    expect(ok.ok && ok.event.payload).toBe(25);
    const rejected = decodeRecord('t', 0, message(), {
      parsePayload: () => {
        throw new Error('total must be an integer');
      },
    });
    expect(!rejected.ok && rejected.poison.reason).toMatch(/rejected by parsePayload: total must be an integer/);
  });
});

describe('stringHeaders', () => {
  it('decodes Buffers as UTF-8, keeps strings, takes the last of repeated values and drops undefined', () => {
    expect(stringHeaders({ a: Buffer.from('ä'), b: 'x', c: [Buffer.from('1'), '2'], d: undefined })).toEqual({ a: 'ä', b: 'x', c: '2' });
    expect(stringHeaders(undefined)).toEqual({});
  });
});
