import { createRequire } from 'node:module';
import { codecOfId } from '../compression-codecs.js';
import { loadCrc32c } from './crc32c.js';

/**
 * kafkajs 2.2.4 encodes each record of a produce request through a fresh
 * Encoder (a zero-filled 512-byte Buffer.alloc), one more Encoder per header,
 * and a Buffer.from([...]) per varint, with Long arithmetic for the timestamp
 * delta: with our six headers that is seven 512-byte allocations and about
 * eighteen small buffers per record, the largest single cost in a catch-up
 * profile (FastBuffer plus the garbage collector: 38% of the relay's busy
 * time). kafkajs has had no release since 2023, so this writes the same bytes
 * into one exactly-sized buffer from Node's pool instead.
 *
 * The wire format is Kafka's Record v2 (KIP-98), exactly as kafkajs writes it:
 *   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
 *   | key varint-bytes | value varint-bytes | headers varint-count [key varint-string, value varint-bytes]
 * Anything outside the shapes we can encode exactly (a key or value that is
 * neither a string, a Buffer nor null, a timestamp delta that is not a small
 * integer) goes to kafkajs's own encoder, so behaviour, errors included, is
 * kafkajs's.
 *
 * The record batch around them is written the same way: kafkajs copies the
 * records into a body Encoder, the body into a batch Encoder and the batch into
 * a third, each growing from 512 bytes with a zero-filled Buffer.alloc, so a
 * 300 KB batch cost three 512 KB allocations and three copies. Here it is one
 * exactly-sized buffer and one copy per record; a compressed batch is the
 * records in one buffer through the codec (compression-codecs.ts), then the
 * same header with the codec in its attributes.
 */

export interface RecordInput {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: unknown;
  value?: unknown;
  headers?: Record<string, unknown>;
}

/** The part of kafkajs's Encoder that the record batch encoder uses: `buf` is checked, `buffer` is copied. */
export interface EncodedRecord {
  buf: Buffer;
  offset: number;
}

type RecordEncoder = (record: RecordInput) => EncodedRecord;

/** Deltas below 2^30 in magnitude zigzag to the same bytes as a 32-bit or a 64-bit varint. */
const SMALL = 2 ** 30;

const zigzag = (v: number) => (v << 1) ^ (v >> 31);

function sizeOfVarInt(v: number): number {
  let u = zigzag(v) >>> 0;
  let bytes = 1;
  while (u >= 0x80) {
    bytes++;
    u >>>= 7;
  }
  return bytes;
}

function writeVarInt(buf: Buffer, at: number, v: number): number {
  let u = zigzag(v) >>> 0;
  while (u >= 0x80) {
    buf[at++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[at++] = u;
  return at;
}

const byteLengthOf = (v: string | Buffer) => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length);

function writeBytes(buf: Buffer, at: number, v: string | Buffer | null | undefined, length: number): number {
  if (v == null) return writeVarInt(buf, at, -1);
  at = writeVarInt(buf, at, length);
  if (typeof v === 'string') return at + buf.write(v, at, length, 'utf8');
  v.copy(buf, at);
  return at + length;
}

const isBytes = (v: unknown): v is string | Buffer | null | undefined => v == null || typeof v === 'string' || Buffer.isBuffer(v);

/**
 * The record encoder, byte for byte kafkajs's `recordBatch/record/v0`, with
 * `fallback` (kafkajs's own) for inputs outside the shapes above. `Encoder`
 * is kafkajs's class: the result is one of its instances, so every later
 * step (the batch, compression) treats it as kafkajs would.
 */
export function fastRecordEncoder(fallback: RecordEncoder, Encoder: { prototype: object }): RecordEncoder {
  return (record) => {
    const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = record;
    if (
      typeof headers !== 'object' ||
      headers === null ||
      !isBytes(key) ||
      !isBytes(value) ||
      !Number.isInteger(timestampDelta) ||
      Math.abs(timestampDelta) >= SMALL ||
      !Number.isInteger(offsetDelta) ||
      Math.abs(offsetDelta) >= SMALL
    )
      return fallback(record);
    const headerKeys: string[] = [];
    const headerValues: Array<string | Buffer> = [];
    for (const name of Object.keys(headers)) {
      const v = headers[name];
      const values = Array.isArray(v) ? (v as unknown[]) : [v];
      for (const one of values) {
        if (typeof one !== 'string' && !Buffer.isBuffer(one)) return fallback(record);
        headerKeys.push(name);
        headerValues.push(one);
      }
    }
    const keyLength = key == null ? 0 : byteLengthOf(key);
    const valueLength = value == null ? 0 : byteLengthOf(value);
    const sizeOfField = (v: unknown, length: number) => (v == null ? 1 : sizeOfVarInt(length) + length);
    let body = 1 + sizeOfVarInt(timestampDelta) + sizeOfVarInt(offsetDelta) + sizeOfField(key, keyLength) + sizeOfField(value, valueLength);
    body += sizeOfVarInt(headerKeys.length);
    const headerKeyLengths = new Array<number>(headerKeys.length);
    const headerValueLengths = new Array<number>(headerKeys.length);
    for (let i = 0; i < headerKeys.length; i++) {
      const k = (headerKeyLengths[i] = Buffer.byteLength(headerKeys[i]!, 'utf8'));
      const v = (headerValueLengths[i] = byteLengthOf(headerValues[i]!));
      body += sizeOfVarInt(k) + k + sizeOfVarInt(v) + v;
    }
    const total = sizeOfVarInt(body) + body;
    const buf = Buffer.allocUnsafe(total);
    let at = writeVarInt(buf, 0, body);
    buf[at++] = 0;
    at = writeVarInt(buf, at, timestampDelta);
    at = writeVarInt(buf, at, offsetDelta);
    at = writeBytes(buf, at, key, keyLength);
    at = writeBytes(buf, at, value, valueLength);
    at = writeVarInt(buf, at, headerKeys.length);
    for (let i = 0; i < headerKeys.length; i++) {
      at = writeBytes(buf, at, headerKeys[i], headerKeyLengths[i]!);
      at = writeBytes(buf, at, headerValues[i], headerValueLengths[i]!);
    }
    const encoded = Object.create(Encoder.prototype) as EncodedRecord;
    encoded.buf = buf;
    encoded.offset = at;
    return encoded;
  };
}

/** kafkajs's Encoder, the methods the batch writer uses on an exactly-sized instance. */
interface KafkajsEncoder extends EncodedRecord {
  writeInt8(v: number): KafkajsEncoder;
  writeInt16(v: number): KafkajsEncoder;
  writeInt32(v: number): KafkajsEncoder;
  writeInt64(v: unknown): KafkajsEncoder;
}

export interface RecordBatchInput {
  compression?: number;
  firstOffset?: unknown;
  firstTimestamp?: unknown;
  maxTimestamp?: unknown;
  partitionLeaderEpoch?: number;
  lastOffsetDelta?: number;
  transactional?: boolean;
  producerId?: unknown;
  producerEpoch?: number;
  firstSequence?: number;
  records?: unknown[];
}

type RecordBatchEncoder = (batch: RecordBatchInput) => Promise<EncodedRecord>;

/** Record batch v2 (magic 2), as `recordBatch/v0` of kafkajs writes it. */
const MAGIC_BYTE = 2;
const TRANSACTIONAL_MASK = 16;
/** The codec's bits of the attributes. */
const COMPRESSION_CODEC_MASK = 0x07;
/** attributes int16, lastOffsetDelta int32, three int64, producerEpoch int16, firstSequence int32, record count int32. */
const BODY_HEADER = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** firstOffset int64, batch length int32, partitionLeaderEpoch int32, magic int8, crc uint32. */
const BATCH_HEADER = 8 + 4 + 4 + 1 + 4;

const isEncoded = (r: unknown): r is EncodedRecord =>
  typeof r === 'object' && r !== null && Buffer.isBuffer((r as EncodedRecord).buf) && Number.isInteger((r as EncodedRecord).offset);

/**
 * The record batch encoder, byte for byte kafkajs's `RecordBatch`, with
 * `fallback` for compressed batches and records that are not encoders.
 * `Long` and `crc32C` are kafkajs's, so the numbers are converted and the
 * checksum computed exactly as there.
 */
export function fastRecordBatchEncoder(
  fallback: RecordBatchEncoder,
  Encoder: { prototype: object },
  Long: { fromInt(v: number): unknown; fromValue(v: number): unknown },
  crc32C: (b: Buffer) => number,
): RecordBatchEncoder {
  return async (batch) => {
    const records = batch.records ?? [];
    if (!records.every(isEncoded)) return fallback(batch);
    const compression = (batch.compression ?? 0) & COMPRESSION_CODEC_MASK;
    const now = Date.now();
    const {
      firstOffset = Long.fromInt(0),
      firstTimestamp = now,
      maxTimestamp = now,
      partitionLeaderEpoch = 0,
      lastOffsetDelta = 0,
      transactional = false,
      producerId = Long.fromValue(-1),
      producerEpoch = 0,
      firstSequence = 0,
    } = batch;
    let recordBytes = 0;
    for (const r of records) recordBytes += r.offset;
    // Compressed: the records, one after the other, through the codec (Kafka's record batch v2 layout).
    let compressed: Buffer | null = null;
    if (compression !== 0) {
      const plain = Buffer.allocUnsafe(recordBytes);
      let at = 0;
      for (const r of records) at += r.buf.copy(plain, at, 0, r.offset);
      compressed = await codecOfId(compression)!.compress(plain);
    }
    const bodyLength = BODY_HEADER + (compressed ? compressed.length : recordBytes);
    const e = Object.create(Encoder.prototype) as KafkajsEncoder;
    e.buf = Buffer.allocUnsafe(BATCH_HEADER + bodyLength);
    e.offset = 0;
    // The batch length counts what follows it: leader epoch, magic, crc and the body.
    e.writeInt64(firstOffset)
      .writeInt32(4 + 1 + 4 + bodyLength)
      .writeInt32(partitionLeaderEpoch)
      .writeInt8(MAGIC_BYTE);
    const crcAt = e.offset;
    e.offset += 4;
    const bodyStart = e.offset;
    e.writeInt16(compression | (transactional ? TRANSACTIONAL_MASK : 0))
      .writeInt32(lastOffsetDelta)
      .writeInt64(firstTimestamp)
      .writeInt64(maxTimestamp)
      .writeInt64(producerId)
      .writeInt16(producerEpoch)
      .writeInt32(firstSequence)
      .writeInt32(records.length);
    if (compressed) e.offset += compressed.copy(e.buf, e.offset);
    else
      for (const r of records) {
        r.buf.copy(e.buf, e.offset, 0, r.offset);
        e.offset += r.offset;
      }
    e.buf.writeUInt32BE(crc32C(e.buf.subarray(bodyStart, e.offset)), crcAt);
    return e;
  };
}

interface CachedModule {
  exports: unknown;
  __outboxTailRecordEncoder?: true;
}

const RECORD_MODULE = 'kafkajs/src/protocol/recordBatch/record/v0/index.js';
const RECORD_BATCH_MODULE = 'kafkajs/src/protocol/recordBatch/v0/index.js';
/** The one module that takes both encoders, lazily at the first produce request. */
const PRODUCE_V3_MODULE = 'kafkajs/src/protocol/requests/produce/v3/request.js';

/**
 * Makes kafkajs's produce request use the fast encoders, once per process (and
 * per worker thread: each has its own module cache). It must run before the
 * first produce request, which is when kafkajs loads the request module that
 * captures the record encoder; if that already happened it reports false and
 * kafkajs keeps its own encoder, which is slower, not wrong.
 */
export function installFastRecordEncoder(): boolean {
  const require = createRequire(import.meta.url);
  try {
    const recordPath = require.resolve(RECORD_MODULE);
    const cached = (): CachedModule | undefined => (require.cache as Record<string, CachedModule | undefined>)[recordPath];
    if (cached()?.__outboxTailRecordEncoder) return true;
    if (require.cache[require.resolve(PRODUCE_V3_MODULE)]) return false;
    const original = require(RECORD_MODULE) as RecordEncoder;
    const Encoder = require('kafkajs/src/protocol/encoder.js') as { prototype: object };
    const batchModule = require(RECORD_BATCH_MODULE) as { RecordBatch: RecordBatchEncoder };
    const Long = require('kafkajs/src/utils/long.js') as Parameters<typeof fastRecordBatchEncoder>[2];
    // The native crc32c when its prebuilt binary loads, else kafkajs's own (crc32c.ts).
    const crc32C = loadCrc32c().crc32c;
    if (typeof original !== 'function' || typeof batchModule.RecordBatch !== 'function') return false;
    // The produce request destructures RecordBatch from this exports object when it loads.
    batchModule.RecordBatch = fastRecordBatchEncoder(batchModule.RecordBatch, Encoder, Long, crc32C);
    const entry = cached()!;
    entry.exports = fastRecordEncoder(original, Encoder);
    entry.__outboxTailRecordEncoder = true;
    return true;
  } catch {
    // A kafkajs whose internals moved keeps its own encoders: slower, not wrong.
    return false;
  }
}
