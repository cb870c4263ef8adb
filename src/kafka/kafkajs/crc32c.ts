import { createRequire } from 'node:module';

/** CRC-32C (Castagnoli) of a buffer, as the unsigned 32-bit number a Kafka record batch carries. */
export type Crc32c = (bytes: Buffer) => number;

const require = createRequire(import.meta.url);

/** Loads the native crc32c package: @node-rs/crc32, with a prebuilt binary per platform as an optional dependency. */
const loadNative = () => require('@node-rs/crc32') as unknown;

/**
 * The record batch checksum. kafkajs computes it in JavaScript, a table lookup
 * per byte over the whole batch: 5.5% of the relay's busy time in a catch-up
 * profile. @node-rs/crc32 does it natively (SSE4.2 / ARMv8 CRC instructions)
 * and gives the same numbers. Its binary comes as an optional dependency per
 * platform, so on a platform without one (or when it fails to load) kafkajs's
 * own takes its place: slower, never wrong.
 */
export function loadCrc32c(native: () => unknown = loadNative): { crc32c: Crc32c; native: boolean } {
  try {
    const { crc32c } = native() as { crc32c?: (input: Buffer, initialState?: number) => number };
    // One known vector before trusting it: "123456789" -> 0xE3069283, the CRC-32C check value.
    if (typeof crc32c === 'function' && crc32c(Buffer.from('123456789')) === 0xe3069283) return { crc32c: (bytes) => crc32c(bytes), native: true };
  } catch {
    // No prebuilt binary for this platform, or it failed to load: the JavaScript one below.
  }
  return { crc32c: require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as Crc32c, native: false };
}
