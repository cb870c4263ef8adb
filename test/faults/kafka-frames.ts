/**
 * Just enough of the Kafka wire protocol for the late-request nemesis
 * (late-requests.ts): split a client->broker byte stream into request frames
 * (int32 size, then the request header: int16 api_key, int16 api_version,
 * int32 correlation_id, nullable string client_id), and read the producer id
 * and epoch of the transactional requests and the error code of their
 * responses, for the non-flexible versions kafkajs 2.2.4 sends (Produce v3-v7,
 * AddPartitionsToTxn v0-v1, EndTxn v0-v1, InitProducerId v0-v1). A version we
 * cannot read is reported as such (no guessing at offsets).
 */

export const API = { Produce: 0, InitProducerId: 22, AddPartitionsToTxn: 24, EndTxn: 26 } as const;
export type ApiName = keyof typeof API;
const NAMES = new Map<number, ApiName>(Object.entries(API).map(([n, k]) => [k, n as ApiName]));

export function apiName(apiKey: number): string {
  return NAMES.get(apiKey) ?? `api${apiKey}`;
}

export interface RequestFrame {
  /** The whole frame, size prefix included: what the proxy forwards or holds. */
  bytes: Buffer;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** Where the request body starts (after the header), in `bytes`. */
  bodyOffset: number;
}

/** Accumulates chunks of one direction and hands out whole frames (int32 size prefix). */
export class FrameSplitter {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: Buffer[] = [];
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0);
      if (size < 0) throw new Error(`Kafka frame with negative size ${size}: not a Kafka stream`);
      if (this.buffered.length < 4 + size) break;
      frames.push(this.buffered.subarray(0, 4 + size));
      this.buffered = this.buffered.subarray(4 + size);
    }
    return frames;
  }

  get pending(): number {
    return this.buffered.length;
  }
}

/** The request header of one frame (request header v1: non-flexible; the fields read here are the same in v2). */
export function parseRequest(bytes: Buffer): RequestFrame {
  if (bytes.length < 4 + 10) throw new Error(`Kafka request frame of ${bytes.length} bytes is shorter than a request header`);
  const apiKey = bytes.readInt16BE(4);
  const apiVersion = bytes.readInt16BE(6);
  const correlationId = bytes.readInt32BE(8);
  const idLength = bytes.readInt16BE(12);
  const clientId = idLength < 0 ? null : bytes.toString('utf8', 14, 14 + idLength);
  return { bytes, apiKey, apiVersion, correlationId, clientId, bodyOffset: 14 + Math.max(0, idLength) };
}

export interface ProducerFields {
  transactionalId: string | null;
  producerId: bigint;
  producerEpoch: number;
  /** EndTxn only: commit (true) or abort (false). */
  committed?: boolean;
  /** Produce only: the first record batch's base sequence and record count. */
  baseSequence?: number;
  records?: number;
  /** Produce only: the first partition written. */
  topic?: string;
  partition?: number;
}

class Reader {
  constructor(
    private readonly b: Buffer,
    public at: number,
  ) {}
  int8(): number {
    const v = this.b.readInt8(this.at);
    this.at += 1;
    return v;
  }
  int16(): number {
    const v = this.b.readInt16BE(this.at);
    this.at += 2;
    return v;
  }
  int32(): number {
    const v = this.b.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  int64(): bigint {
    const v = this.b.readBigInt64BE(this.at);
    this.at += 8;
    return v;
  }
  string(): string | null {
    const n = this.int16();
    if (n < 0) return null;
    const s = this.b.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }
}

/**
 * The producer id and epoch a transactional request carries, or null for
 * other requests and versions this parser does not read.
 */
export function producerFields(frame: RequestFrame): ProducerFields | null {
  const r = new Reader(frame.bytes, frame.bodyOffset);
  const v = frame.apiVersion;
  if (frame.apiKey === API.EndTxn && v <= 1) {
    const transactionalId = r.string();
    return { transactionalId, producerId: r.int64(), producerEpoch: r.int16(), committed: r.int8() !== 0 };
  }
  if (frame.apiKey === API.InitProducerId && v <= 1) {
    // The id and epoch come with the response (RequestRecord.assigned); -1 here.
    return { transactionalId: r.string(), producerId: -1n, producerEpoch: -1 };
  }
  if (frame.apiKey === API.AddPartitionsToTxn && v <= 2) {
    const transactionalId = r.string();
    return { transactionalId, producerId: r.int64(), producerEpoch: r.int16() };
  }
  if (frame.apiKey === API.Produce && v >= 3 && v <= 8) {
    const transactionalId = r.string();
    r.int16(); // acks
    r.int32(); // timeout
    if (r.int32() < 1) return null;
    const topic = r.string() ?? '';
    if (r.int32() < 1) return null;
    const partition = r.int32();
    const size = r.int32();
    if (size < 61) return null;
    // Record batch v2: baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1, crc 4, attributes 2,
    // lastOffsetDelta 4, baseTimestamp 8, maxTimestamp 8, then producerId, producerEpoch, baseSequence, count.
    const batch = r.at;
    const magic = frame.bytes.readInt8(batch + 16);
    if (magic !== 2) return null;
    return {
      transactionalId,
      producerId: frame.bytes.readBigInt64BE(batch + 43),
      producerEpoch: frame.bytes.readInt16BE(batch + 51),
      baseSequence: frame.bytes.readInt32BE(batch + 53),
      records: frame.bytes.readInt32BE(batch + 57),
      topic,
      partition,
    };
  }
  return null;
}

export interface ResponseFields {
  correlationId: number;
  /** The first error code of the response (Produce: its first partition's). */
  errorCode: number | null;
  /** Produce only: the base offset the broker gave the first partition's batch. */
  baseOffset?: bigint;
  /** InitProducerId only. */
  producerId?: bigint;
  producerEpoch?: number;
}

/** The correlation id of a response frame (response header v0). */
export function responseCorrelationId(bytes: Buffer): number {
  return bytes.readInt32BE(4);
}

/** Reads a response to a request of `apiKey`/`apiVersion` (non-flexible versions only; errorCode null otherwise). */
export function parseResponse(bytes: Buffer, apiKey: number, apiVersion: number): ResponseFields {
  const correlationId = responseCorrelationId(bytes);
  const r = new Reader(bytes, 8);
  if ((apiKey === API.EndTxn && apiVersion <= 1) || (apiKey === API.InitProducerId && apiVersion <= 1)) {
    r.int32(); // throttle_time_ms
    const errorCode = r.int16();
    if (apiKey === API.EndTxn) return { correlationId, errorCode };
    return { correlationId, errorCode, producerId: r.int64(), producerEpoch: r.int16() };
  }
  if (apiKey === API.AddPartitionsToTxn && apiVersion <= 2) {
    r.int32(); // throttle_time_ms
    if (r.int32() < 1) return { correlationId, errorCode: null };
    r.string();
    if (r.int32() < 1) return { correlationId, errorCode: null };
    r.int32(); // partition
    return { correlationId, errorCode: r.int16() };
  }
  if (apiKey === API.Produce && apiVersion >= 3 && apiVersion <= 8) {
    if (r.int32() < 1) return { correlationId, errorCode: null };
    r.string();
    if (r.int32() < 1) return { correlationId, errorCode: null };
    r.int32(); // partition
    const errorCode = r.int16();
    return { correlationId, errorCode, baseOffset: r.int64() };
  }
  return { correlationId, errorCode: null };
}

/** The error codes the late requests meet (Kafka's protocol error table). */
const ERRORS: Record<number, string> = {
  0: 'NONE',
  7: 'REQUEST_TIMED_OUT',
  45: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
  46: 'DUPLICATE_SEQUENCE_NUMBER',
  47: 'INVALID_PRODUCER_EPOCH',
  48: 'INVALID_TXN_STATE',
  49: 'INVALID_PRODUCER_ID_MAPPING',
  51: 'CONCURRENT_TRANSACTIONS',
  59: 'UNKNOWN_PRODUCER_ID',
  90: 'PRODUCER_FENCED',
  3: 'UNKNOWN_TOPIC_OR_PARTITION',
  6: 'NOT_LEADER_OR_FOLLOWER',
};

export function errorName(code: number | null): string {
  if (code === null) return 'unread';
  return ERRORS[code] ?? `error ${code}`;
}
