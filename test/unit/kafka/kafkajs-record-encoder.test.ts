import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { rng as random } from '../../support/seeded-random.js';
import { fastRecordBatchEncoder, fastRecordEncoder, type RecordBatchInput, type RecordInput } from '../../../src/kafka/kafkajs/kafkajs-record-encoder.js';
import { COMPRESSION_ID } from '../../../src/kafka/compression-codecs.js';
import { installKafkajsCodecs } from '../../../src/kafka/kafkajs/kafkajs-codecs.js';

const require = createRequire(import.meta.url);
type KafkajsEncoder = { buffer: Buffer; buf: Buffer; offset: number };
// Loaded by path, not through the module cache entry the relay replaces: this is always kafkajs's own.
const kafkajsRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (r: RecordInput) => KafkajsEncoder;
const Encoder = require('kafkajs/src/protocol/encoder.js') as { prototype: object };

const { RecordBatch: kafkajsRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch: (b: RecordBatchInput) => Promise<KafkajsEncoder>;
};
type Long = { fromInt(v: number): unknown; fromValue(v: number | string): unknown };
const Long = require('kafkajs/src/utils/long.js') as Long;
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => unknown;
type DecodedRecord = { key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer>; offset: string; timestamp: string };
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (d: unknown) => Promise<{ records: DecodedRecord[] }>;
const comparable = (r: DecodedRecord) => ({
  key: r.key?.toString('hex'),
  value: r.value?.toString('hex'),
  headers: r.headers,
  offset: r.offset,
  timestamp: r.timestamp,
});

const fast = fastRecordEncoder(kafkajsRecord, Encoder);
const fastBatch = fastRecordBatchEncoder(kafkajsRecordBatch, Encoder, Long, crc32C);
const bytesOf = (e: unknown) => (e as KafkajsEncoder).buffer;

const ALPHABET = ['a', 'Z', '0', '-', ' ', 'é', '注', '文', '😀', '\u0000', '"', '\\'];
function text(next: () => number, max: number): string {
  const n = Math.floor(next() * max);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(next() * ALPHABET.length)];
  return s;
}
function bytes(next: () => number, max: number): Buffer {
  return Buffer.from(Array.from({ length: Math.floor(next() * max) }, () => Math.floor(next() * 256)));
}
function field(next: () => number, max: number): string | Buffer | null {
  const r = next();
  return r < 0.15 ? null : r < 0.6 ? text(next, max) : bytes(next, max);
}

describe('kafkajs record encoder', () => {
  it('writes the same bytes as kafkajs for 5,000 random records (keys, values, headers, deltas)', () => {
    const mismatches: number[] = [];
    for (let seed = 1; seed <= 5_000; seed++) {
      const next = random(seed);
      const headers: Record<string, string | Buffer | Array<string | Buffer>> = {};
      const count = Math.floor(next() * 9);
      for (let i = 0; i < count; i++) {
        const name = text(next, 12) + i;
        headers[name] = next() < 0.2 ? [text(next, 40), bytes(next, 40)] : next() < 0.5 ? text(next, 300) : bytes(next, 300);
      }
      const record: RecordInput = {
        offsetDelta: Math.floor(next() * (next() < 0.1 ? 2 ** 29 : 600)),
        timestampDelta: next() < 0.1 ? -Math.floor(next() * 2 ** 29) : Math.floor(next() * (next() < 0.1 ? 2 ** 29 : 70_000)),
        key: field(next, 60),
        value: next() < 0.05 ? text(next, 20_000) : field(next, 2_000),
        headers,
      };
      if (!bytesOf(fast(record)).equals(bytesOf(kafkajsRecord(record)))) mismatches.push(seed);
    }
    expect(mismatches).toEqual([]);
  });

  it('writes the same bytes as kafkajs for the shape the relay sends (string key, Buffer value, six string headers)', () => {
    const record: RecordInput = {
      offsetDelta: 41,
      timestampDelta: 3,
      key: 'order-7',
      value: Buffer.from('{"orderId":7,"total":"12.50"}'),
      headers: {
        id: '0b6a3f0e-7c4e-4a55-9a35-2b8a3a0f1f11',
        event_type: 'OrderCreated',
        aggregate_type: 'order',
        aggregate_id: '7',
        created_at: '2026-12-01T12:27:21.696420Z',
        commit_lsn: '0/93DC000',
      },
    };
    const ours = fast(record);
    expect(bytesOf(ours)).toEqual(bytesOf(kafkajsRecord(record)));
    expect(ours).toBeInstanceOf(Encoder as unknown as new () => object);
  });

  it('leaves to kafkajs what it cannot write exactly: a numeric key, a huge or fractional delta, a numeric header', () => {
    const calls: RecordInput[] = [];
    const spy = fastRecordEncoder((r) => {
      calls.push(r);
      return kafkajsRecord(r);
    }, Encoder);
    const odd: RecordInput[] = [
      { key: 42, value: 'v' },
      { key: 'k', value: 'v', timestampDelta: 2 ** 40 },
      { key: 'k', value: 'v', timestampDelta: 1.5 },
      { key: 'k', value: 'v', headers: { a: 'x', b: 7 as unknown as string } },
    ];
    const outcome = (encode: (r: RecordInput) => unknown, r: RecordInput) => {
      try {
        return bytesOf(encode(r)).toString('hex');
      } catch (e) {
        return `throws ${(e as Error).message}`;
      }
    };
    const kafkajsOutcomes = odd.map((r) => outcome(kafkajsRecord, r));
    calls.length = 0;
    expect(odd.map((r) => outcome(spy, r))).toEqual(kafkajsOutcomes);
    expect(calls).toEqual(odd);
  });
});

describe('kafkajs record batch encoder', () => {
  const recordsOf = (next: () => number, n: number) =>
    Array.from({ length: n }, (_, i) =>
      fast({ offsetDelta: i, timestampDelta: Math.floor(next() * 50), key: text(next, 20), value: bytes(next, 400), headers: { id: text(next, 36) } }),
    );

  it('writes the same bytes as kafkajs for 300 random batches (empty, idempotent, transactional, large offsets and ids)', async () => {
    const mismatches: number[] = [];
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const records = recordsOf(next, Math.floor(next() * (next() < 0.1 ? 2_000 : 40)));
      const t = 1_764_000_000_000 + Math.floor(next() * 1e9);
      const batch: RecordBatchInput = {
        records,
        firstTimestamp: t,
        maxTimestamp: t + Math.floor(next() * 100),
        lastOffsetDelta: Math.max(0, records.length - 1),
        transactional: next() < 0.5,
        ...(next() < 0.5
          ? {}
          : {
              producerId: Long.fromValue(String(Math.floor(next() * 2 ** 52))),
              producerEpoch: Math.floor(next() * 30_000),
              firstSequence: Math.floor(next() * 2 ** 31),
            }),
        ...(next() < 0.5 ? {} : { firstOffset: Long.fromValue(String(Math.floor(next() * 2 ** 50))), partitionLeaderEpoch: Math.floor(next() * 1000) }),
      };
      const [ours, theirs] = await Promise.all([fastBatch(batch), kafkajsRecordBatch(batch)]);
      if (!bytesOf(ours).equals(bytesOf(theirs)) || (ours as unknown as { size(): number }).size() !== theirs.buffer.length) mismatches.push(seed);
    }
    expect(mismatches).toEqual([]);
  });

  it('leaves records that are not encoders to kafkajs', async () => {
    const seen: RecordBatchInput[] = [];
    const spy = fastRecordBatchEncoder(
      (b) => {
        seen.push(b);
        return kafkajsRecordBatch(b);
      },
      Encoder,
      Long,
      crc32C,
    );
    const odd: RecordBatchInput = { records: [{ buffer: Buffer.from('x') }], firstTimestamp: 1, maxTimestamp: 2 };
    await expect(spy(odd)).rejects.toThrow('Encoder');
    expect(seen).toEqual([odd]);
  });

  for (const compression of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    it(`compresses a batch with ${compression} into the bytes kafkajs writes with the same codec, and kafkajs reads it back`, async () => {
      installKafkajsCodecs();
      const records = recordsOf(random(11), 200);
      const batch: RecordBatchInput = {
        compression: COMPRESSION_ID[compression],
        records,
        firstTimestamp: 1_764_000_000_000,
        maxTimestamp: 1_764_000_000_050,
        lastOffsetDelta: records.length - 1,
        transactional: true,
        producerId: Long.fromValue('4242'),
        producerEpoch: 3,
        firstSequence: 17,
      };
      const ours = bytesOf(await fastBatch(batch));
      // kafkajs's own batch encoder, with the same codec installed: the same header, attributes, count and CRC.
      expect(ours.equals(bytesOf(await kafkajsRecordBatch(batch)))).toBe(true);
      const body = ours.subarray(8 + 4 + 4 + 1 + 4);
      expect(ours.readUInt32BE(8 + 4 + 4 + 1), 'the CRC covers the compressed body').toBe(crc32C(body) >>> 0);
      expect(body.readInt16BE(0) & 0x07, 'the codec is in the attributes').toBe(COMPRESSION_ID[compression]);
      expect(body.length, 'compressed, the body is smaller than the records').toBeLessThan(records.reduce((n, r) => n + (r as KafkajsEncoder).offset, 0));
      const decoded = await decodeBatch(new KafkajsDecoder(ours));
      const plain = await decodeBatch(new KafkajsDecoder(bytesOf(await kafkajsRecordBatch({ ...batch, compression: 0 }))));
      expect(decoded.records.map(comparable)).toEqual(plain.records.map(comparable));
      expect(decoded.records).toHaveLength(200);
    });
  }
});
