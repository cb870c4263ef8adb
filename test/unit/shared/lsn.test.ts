import { describe, expect, it } from 'vitest';
import { Lsn } from '../../../src/shared/lsn.js';

describe('Lsn', () => {
  it('parses unpadded and padded forms to the same value', () => {
    expect(Lsn.parse('0/1533430')).toBe(Lsn.parse('00000000/01533430'));
    expect(Lsn.parse('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
  });

  it('orders numerically where string comparison would be wrong', () => {
    const small = Lsn.parse('0/FFFFFFF');
    const big = Lsn.parse('0/10000000');
    expect('0/FFFFFFF' > '0/10000000').toBe(true); // the trap
    expect(small < big).toBe(true);
  });

  it('formats like PostgreSQL (%X/%X) and round-trips', () => {
    for (const text of ['0/0', '0/1925EB0', '16/B374D848', 'FFFFFFFF/FFFFFFFF']) {
      expect(Lsn.format(Lsn.parse(text))).toBe(text);
    }
  });

  it('rejects text that is not an LSN', () => {
    for (const bad of ['', '0', '0/', 'x/1', '0/123456789', '1/2/3']) expect(() => Lsn.parse(bad)).toThrow(/not an LSN/);
  });

  it('reads the 8-byte big-endian protocol form', () => {
    const buffer = Buffer.from('00000016b374d848', 'hex');
    expect(Lsn.format(Lsn.read(buffer, 0))).toBe('16/B374D848');
  });

  it('makes an Lsn from a bigint only inside the 64-bit range', () => {
    expect(Lsn.of(0n)).toBe(0n);
    expect(Lsn.format(Lsn.of((1n << 64n) - 1n))).toBe('FFFFFFFF/FFFFFFFF');
    expect(() => Lsn.of(-1n)).toThrow(RangeError);
    expect(() => Lsn.of(1n << 64n)).toThrow(RangeError);
  });

  it('is a type of its own: a timestamp or a sum is not an Lsn until Lsn.of says so', () => {
    const commitTime = 1_000_000n;
    // @ts-expect-error a bigint (here a commit timestamp) is not an Lsn
    const wrong: Lsn = commitTime;
    const lsn = Lsn.parse('0/10');
    // @ts-expect-error arithmetic on an Lsn gives a plain bigint
    const next: Lsn = lsn + 1n;
    expect([wrong, next]).toEqual([1_000_000n, 17n]);
    expect(Lsn.max(lsn, Lsn.of(lsn + 1n))).toBe(17n);
  });
});
