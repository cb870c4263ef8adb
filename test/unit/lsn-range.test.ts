import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/replication/lsn.js';

describe('Lsn.format range', () => {
  it('formats the whole 64-bit range and refuses anything outside it', () => {
    expect(Lsn.format((1n << 64n) - 1n)).toBe('FFFFFFFF/FFFFFFFF');
    expect(Lsn.format(0n)).toBe('0/0');
    expect(() => Lsn.format(1n << 64n)).toThrow(RangeError);
    expect(() => Lsn.format((1n << 64n) + 1n)).toThrow('LSN out of range: 18446744073709551617');
    expect(() => Lsn.format(-1n)).toThrow(RangeError);
  });

  it('picks the larger of two LSNs', () => {
    expect(Lsn.max(1n, 2n)).toBe(2n);
    expect(Lsn.max(2n, 1n)).toBe(2n);
    expect(Lsn.max(3n, 3n)).toBe(3n);
  });
});
