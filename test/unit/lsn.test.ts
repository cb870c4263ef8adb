import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/replication/lsn.js';

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
});
