/** kafkajs against the run's real broker: what an idempotent producer writes is what a consumer reads back. */
import { CompressionTypes, Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { kafkaFor, readTopic } from '../support/kafka.js';
import { getStack } from '../support/stack.js';

describe('Kafka round trip', () => {
  it('reads back every message an idempotent acks=all producer wrote, with keys and headers, in order per key', async () => {
    const stack = getStack();
    const kafka = kafkaFor(stack, 'kafka-roundtrip');
    const topic = uniqueName('roundtrip');
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true })).toBe(true);
    } finally {
      await admin.disconnect();
    }

    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 10 },
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    const N = 60;
    const sent = Array.from({ length: N }, (_, i) => ({
      key: `agg-${i % 7}`,
      value: JSON.stringify({ seq: i, text: `event ${i} ✓` }),
      headers: { 'event-id': `id-${i}`, 'event-type': i % 2 === 0 ? 'Even' : 'Odd' },
    }));
    await producer.connect();
    try {
      // several requests, so per-key order spans batches
      for (let i = 0; i < N; i += 20) {
        const metadata = await producer.send({ topic, acks: -1, compression: CompressionTypes.None, messages: sent.slice(i, i + 20) });
        expect(metadata.every((m) => m.errorCode === 0)).toBe(true);
      }
    } finally {
      await producer.disconnect();
    }

    const received = await readTopic(stack, topic, N);

    expect(received).toHaveLength(N);
    const byId = new Map(received.map((m) => [m.headers['event-id'], m]));
    for (const s of sent) {
      const r = byId.get(s.headers['event-id']);
      expect(r, `message ${s.headers['event-id']}`).toBeDefined();
      expect(r!.key).toBe(s.key);
      expect(r!.value).toBe(s.value);
      expect(r!.headers).toEqual(s.headers);
    }
    // one partition per key, and the send order within it
    for (const key of new Set(sent.map((s) => s.key))) {
      const forKey = received.filter((m) => m.key === key);
      expect(new Set(forKey.map((m) => m.partition)).size).toBe(1);
      const order = forKey.sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset))).map((m) => m.headers['event-id']);
      expect(order).toEqual(sent.filter((s) => s.key === key).map((s) => s.headers['event-id']));
    }
  });
});
