declare const LSN_BRAND: unique symbol;

/**
 * A PostgreSQL log sequence number as a bigint value. Strings ("16/B374D848")
 * exist only at the edges (SQL results, logs, Kafka headers): comparing them as
 * strings is wrong because the library emits unpadded hex while parsed fields
 * are padded (docs/architecture.md#lsn-rules, rule 6).
 *
 * Branded: only Lsn.of, Lsn.parse and Lsn.read make one, so a commit
 * timestamp or a byte count (bigints too) cannot pass for an LSN. Arithmetic
 * yields a plain bigint; going back needs Lsn.of.
 */
export type Lsn = bigint & { readonly [LSN_BRAND]: true };

const MAX_LSN = (1n << 64n) - 1n;
const LSN_PATTERN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

export const Lsn = {
  /** A bigint known to be a WAL position; RangeError outside 0 .. 2^64-1. */
  of(value: bigint): Lsn {
    if (value < 0n || value > MAX_LSN) throw new RangeError(`LSN out of range: ${value}`);
    return value as Lsn;
  },

  parse(text: string): Lsn {
    const match = LSN_PATTERN.exec(text.trim());
    if (!match) throw new TypeError(`not an LSN: ${JSON.stringify(text)} (expected hex "X/X", e.g. "0/16B3748")`);
    return ((BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`)) as Lsn;
  },

  /** Formats the way PostgreSQL does (`%X/%X`), so values can be pasted into SQL. */
  format(lsn: Lsn): string {
    if (lsn < 0n || lsn > MAX_LSN) throw new RangeError(`LSN out of range: ${lsn}`);
    return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
  },

  /** Reads the 8-byte big-endian LSN used throughout the replication protocol. */
  read(buffer: Buffer, offset: number): Lsn {
    return buffer.readBigUInt64BE(offset) as Lsn;
  },

  max(a: Lsn, b: Lsn): Lsn {
    return a > b ? a : b;
  },
} as const;
