import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadCrc32c } from '../../../src/kafka/kafkajs/crc32c.js';

const require = createRequire(import.meta.url);
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;

const vectors: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)],
  ['one byte', Buffer.from([0x61])],
  ['the check string', Buffer.from('123456789')],
  ['32 zero bytes', Buffer.alloc(32)],
  ['32 0xff bytes', Buffer.alloc(32, 0xff)],
  // Sizes around the SIMD block widths, and a 300 kB produce batch.
  ...[7, 8, 15, 16, 63, 64, 65, 1023, 4096, 300_000].map((n): [string, Buffer] => [`${n} random bytes`, randomBytes(n)]),
  ['an unaligned view into a larger buffer', randomBytes(5000).subarray(3, 4001)],
];

describe('crc32c for record batches', () => {
  it('loads the native crc32c here (linux-x64-gnu has a prebuilt binary)', () => {
    expect(loadCrc32c().native).toBe(true);
  });

  it("gives kafkajs's checksum on every vector, as an unsigned 32-bit number", () => {
    const { crc32c } = loadCrc32c();
    for (const [name, bytes] of vectors) {
      const native = crc32c(bytes);
      expect(native, name).toBe(kafkajsCrc32c(bytes));
      expect(native >>> 0, name).toBe(native);
    }
    // The CRC-32C check value (RFC 3720, B.4).
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it("falls back to kafkajs's JavaScript crc32c when the native package cannot load", () => {
    const fallback = loadCrc32c(() => {
      throw new Error(`Cannot find module '@node-rs/crc32-linux-x64-gnu'`);
    });
    expect(fallback.native).toBe(false);
    expect(fallback.crc32c).toBe(kafkajsCrc32c);
    for (const [name, bytes] of vectors) expect(fallback.crc32c(bytes), name).toBe(loadCrc32c().crc32c(bytes));
  });

  it('falls back when the native package loads but gives a wrong checksum or no crc32c', () => {
    expect(loadCrc32c(() => ({ crc32c: () => 0 })).native).toBe(false);
    expect(loadCrc32c(() => ({ crc32: () => 0xe3069283 })).native).toBe(false);
  });
});
