import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { lz4Compress, lz4Decompress, snappyCompress, snappyDecompress } from '@platformatic/wasm-utils';
import { OutboxTailError } from '../shared/outbox-tail-error.js';

/** --compression: the record batch codecs of Kafka's protocol. */
export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

/** The codec's id in a record batch's attributes (its lowest three bits), as Kafka numbers them. */
export const COMPRESSION_ID: Record<Compression, number> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

export interface Codec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

/** Java producers frame snappy the xerial way (a magic header, then length-prefixed blocks); others write it raw. */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** The magic, a version and a compatible-version int32. */
const XERIAL_HEADER_BYTES = 16;

function snappyUnframe(data: Buffer): Buffer {
  if (data.length < XERIAL_HEADER_BYTES || !data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) return snappyDecompress(data);
  const blocks: Buffer[] = [];
  for (let at = XERIAL_HEADER_BYTES; at < data.length;) {
    if (at + 4 > data.length) throw new Error('snappy (xerial): a block length is cut off');
    const length = data.readUInt32BE(at);
    at += 4;
    if (at + length > data.length) throw new Error('snappy (xerial): a block is cut off');
    blocks.push(snappyDecompress(data.subarray(at, at + length)));
    at += length;
  }
  return Buffer.concat(blocks);
}

const gzip = promisify(zlib.gzip);
const unzip = promisify(zlib.unzip);

/** zlib has zstd since Node 22.15 and 23.8; on older runtimes --compression zstd is refused at start. */
const zstd = typeof zlib.zstdCompress === 'function' ? { compress: promisify(zlib.zstdCompress), decompress: promisify(zlib.zstdDecompress) } : null;

/**
 * The codecs: gzip and zstd from Node's zlib; snappy and LZ4 (the frame
 * format Kafka uses since message format v1) from @platformatic/wasm-utils,
 * the WebAssembly codecs @platformatic/kafka itself uses, so both clients
 * write the same bytes and need no native binary.
 */
const CODECS: Record<Exclude<Compression, 'none'>, Codec | null> = {
  gzip: { compress: (d) => gzip(d), decompress: (d) => unzip(d) },
  snappy: { compress: async (d) => snappyCompress(d), decompress: async (d) => snappyUnframe(d) },
  lz4: { compress: async (d) => lz4Compress(d), decompress: async (d) => lz4Decompress(d) },
  zstd: zstd && { compress: (d) => zstd.compress(d), decompress: (d) => zstd.decompress(d) },
};

/** The codec of a compression, or a config error naming what is missing. */
export function codecOf(compression: Exclude<Compression, 'none'>): Codec {
  const codec = CODECS[compression];
  if (!codec)
    throw new OutboxTailError('CONFIG_INVALID', `--compression ${compression}: this Node.js (${process.version}) has no zstd in zlib`, {
      hint: 'run on Node.js 24 (or 22.15+), or choose --compression lz4',
    });
  return codec;
}

/** The codec of a record batch's attributes (null for none). */
export function codecOfId(id: number): Codec | null {
  const name = (Object.keys(COMPRESSION_ID) as Compression[]).find((c) => COMPRESSION_ID[c] === id);
  if (name === undefined) throw new Error(`unknown compression codec ${id} in a record batch`);
  return name === 'none' ? null : codecOf(name);
}
