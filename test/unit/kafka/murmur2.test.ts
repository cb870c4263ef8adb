import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { javaPartition, murmur2 } from '../../../src/kafka/platformatic/murmur2.js';

const require = createRequire(import.meta.url);
// kafkajs's own murmur2 (a port of the Java client's), the reference.
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

describe('murmur2 (Java-compatible partitioning)', () => {
  it('matches kafkajs (and so the Java client) on keys of every length and byte value', () => {
    const keys: Buffer[] = [Buffer.alloc(0)];
    for (let i = 0; i < 2000; i++) keys.push(Buffer.from(String(i)));
    for (let len = 1; len <= 40; len++) keys.push(Buffer.from(Array.from({ length: len }, (_, j) => (j * 37 + len * 101) & 0xff)));
    keys.push(Buffer.from('order-ß-日本-🙂'), Buffer.from(crypto.randomUUID()));
    for (const key of keys) expect(murmur2(key), key.toString('hex')).toBe(kafkajsMurmur2(key));
  });

  it('known values of the Java client', () => {
    // org.apache.kafka.common.utils.UtilsTest.testMurmur2
    expect(murmur2(Buffer.from('21'))).toBe(-973932308);
    expect(murmur2(Buffer.from('foobar'))).toBe(-790332482);
    expect(murmur2(Buffer.from('a-little-bit-long-string'))).toBe(-985981536);
    expect(murmur2(Buffer.from('a-little-bit-longer-string'))).toBe(-1486304829);
    expect(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'))).toBe(-58897971);
    expect(murmur2(Buffer.from([97, 98, 99]))).toBe(479470107);
  });

  it('picks toPositive(murmur2) % partitions', () => {
    for (let i = 0; i < 500; i++) {
      const key = Buffer.from(`key-${i}`);
      expect(javaPartition(key, 7)).toBe((kafkajsMurmur2(key) & 0x7fffffff) % 7);
    }
  });
});
