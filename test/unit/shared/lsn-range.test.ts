import { describe, expect, it } from 'vitest';
import { Lsn } from '../../../src/shared/lsn.js';

/**
 * A bigint that passes for an Lsn without Lsn.of's range check: the way a
 * value outside 0 .. 2^64-1 could still reach Lsn.format (a cast elsewhere).
 */
const unchecked = (value: bigint) => value as Lsn;

describe('Lsn.format range', () => {
  it('formats the whole 64-bit range and refuses anything outside it', () => {
    expect(Lsn.format(Lsn.of((1n << 64n) - 1n))).toBe('FFFFFFFF/FFFFFFFF');
    expect(Lsn.format(Lsn.of(0n))).toBe('0/0');
    expect(() => Lsn.format(unchecked(1n << 64n))).toThrow(RangeError);
    expect(() => Lsn.format(unchecked((1n << 64n) + 1n))).toThrow('LSN out of range: 18446744073709551617');
    expect(() => Lsn.format(unchecked(-1n))).toThrow(RangeError);
  });

  it('picks the larger of two LSNs', () => {
    expect(Lsn.max(Lsn.of(1n), Lsn.of(2n))).toBe(2n);
    expect(Lsn.max(Lsn.of(2n), Lsn.of(1n))).toBe(2n);
    expect(Lsn.max(Lsn.of(3n), Lsn.of(3n))).toBe(3n);
  });
});
