import { describe, expect, it } from 'vitest';
import { packRecords, unpackRecords } from '../../../src/sink/thread/record-wire.js';
import type { SinkRecord } from '../../../src/sink/sink-record.js';

const record = (over: Partial<SinkRecord> = {}): SinkRecord => ({
  topic: 'outbox.event.order',
  key: 'o-1',
  value: Buffer.from('{"a": 1}'),
  headers: { id: 'e1', event_type: 'OrderCreated', commit_lsn: '0/1925E80' },
  bytes: 120,
  ...over,
});

describe('record wire (records crossing to the sink thread)', () => {
  it('gives back every record field for field, in order, with header order kept', () => {
    const records = [record(), record({ key: 'o-2', headers: { z: '1', a: '2' }, value: Buffer.alloc(0), bytes: 7 }), record({ topic: 't2' })];
    const back = unpackRecords(packRecords(records));
    expect(back).toEqual(records);
    expect(Object.keys(back[1]!.headers)).toEqual(['z', 'a']);
  });

  it('keeps multi-byte text and binary payloads byte for byte, also when they outgrow the size estimate', () => {
    // bytes: 1 understates the record, so the buffer must grow; the strings are 3 bytes per UTF-16 unit in UTF-8.
    const value = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 256));
    const r = record({ key: '☕'.repeat(300), headers: { 'ü☕': 'ü'.repeat(1000) }, value, bytes: 1 });
    const [back] = unpackRecords(packRecords([r, r]));
    expect(back!.key).toBe(r.key);
    expect(back!.headers).toEqual(r.headers);
    expect(Buffer.compare(back!.value, value)).toBe(0);
  });

  it('carries payloads that are slices of a larger buffer without their neighbours', () => {
    const chunk = Buffer.from('xxxx{"in": "the middle"}yyyy');
    const [back] = unpackRecords(packRecords([record({ value: chunk.subarray(4, chunk.length - 4) })]));
    expect(back!.value.toString()).toBe('{"in": "the middle"}');
  });

  it('packs no records into an empty list', () => {
    expect(unpackRecords(packRecords([]))).toEqual([]);
  });

  it('refuses a buffer whose content does not end where its length says', () => {
    const wire = packRecords([record()]);
    new DataView(wire).setUint32(0, new DataView(wire).getUint32(0, true) + 3, true);
    expect(() => unpackRecords(wire)).toThrow(/trailing byte/);
  });
});
