/**
 * Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) in 32-bit
 * integer arithmetic, and the Java client's default partition for a keyed
 * record: toPositive(murmur2(key)) % partitions. kafkajs's DefaultPartitioner
 * computes the same, so both sinks put a key on the partition Java clients use.
 */
export function murmur2(data: Buffer): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[tail + 2]! << 16;
    if (rest >= 2) h ^= data[tail + 1]! << 8;
    h ^= data[tail]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition Java's (and kafkajs's) default partitioner picks for a keyed record. */
export function javaPartition(key: Buffer, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
