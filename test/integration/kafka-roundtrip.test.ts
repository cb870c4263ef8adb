/**
 * Our sinks (both --kafka-client libraries, built by createKafkaSink from the
 * config) against the run's real broker: metadata() as preflight uses it,
 * then what send() resolved for is what a consumer reads back, byte for byte,
 * every key on the partition Java's partitioner picks, in send order per key.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/resolve-config.js';
import { createKafkaSink } from '../../src/sink/create-sink.js';
import { javaPartition } from '../../src/kafka/platformatic/murmur2.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor, readTopic } from '../support/kafka.js';
import { getStack } from '../support/stack.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const logger = pino({ level: 'silent' });
const PARTITIONS = 3;

describe('Kafka sinks round trip', () => {
  for (const client of ['kafkajs', 'platformatic'] as const) {
    it(`${client}: metadata names the topic's partitions; every record sent is read back with key, value and headers, on the Java partition, in order per key`, async () => {
      const stack = getStack();
      const topic = uniqueName(`roundtrip_${client}`);
      const admin = kafkaFor(stack, 'kafka-roundtrip').admin();
      await admin.connect();
      try {
        expect(await createTopicsAndWait(admin, [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }])).toBe(true);
      } finally {
        await admin.disconnect();
      }
      const config = resolveConfig({ flags: { brokers: stack.brokers, kafkaClient: client, clientId: `roundtrip-${client}`, allowAutoTopicCreation: false } });
      const sink = createKafkaSink(config, logger);

      const missing = uniqueName('never_created');
      const metadata = await sink.metadata([topic, missing]);
      expect(metadata.brokers).toBe(stack.brokers.length);
      expect(metadata.topics).toEqual(new Map([[topic, PARTITIONS]]));

      const N = 60;
      const sent: SinkRecord[] = Array.from({ length: N }, (_, i) => {
        const value = Buffer.from(JSON.stringify({ seq: i, text: `event ${i} ✓` }));
        return { topic, key: `agg-${i % 7}`, value, headers: { id: `id-${i}`, event_type: i % 2 === 0 ? 'Even' : 'Odd' }, bytes: value.length + 50 };
      });
      await sink.connect();
      try {
        // several requests, so per-key order spans batches
        for (let i = 0; i < N; i += 20) await sink.send(sent.slice(i, i + 20));
      } finally {
        await sink.disconnect();
      }
      // metadata() asked about a missing topic without creating it
      expect((await sink.metadata([missing])).topics.size).toBe(0);

      const received = await readTopic(stack, topic, N);
      expect(received).toHaveLength(N);
      const byId = new Map(received.map((m) => [m.headers.id, m]));
      for (const s of sent) {
        const r = byId.get(s.headers.id);
        expect(r, `message ${s.headers.id}`).toBeDefined();
        expect(r!.key).toBe(s.key);
        expect(r!.value).toBe(s.value.toString());
        expect(r!.headers).toEqual(s.headers);
        expect(r!.partition, `partition of ${s.key}`).toBe(javaPartition(Buffer.from(s.key), PARTITIONS));
      }
      for (const key of new Set(sent.map((s) => s.key))) {
        const order = received
          .filter((m) => m.key === key)
          .sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)))
          .map((m) => m.headers.id);
        expect(order).toEqual(sent.filter((s) => s.key === key).map((s) => s.headers.id));
      }
    });

    it(`${client}: metadata of an unreachable cluster rejects as KAFKA_UNREACHABLE, retriable, naming the brokers`, async () => {
      const config = resolveConfig({ flags: { brokers: ['127.0.0.1:1'], kafkaClient: client, connectTimeoutMs: 500 } });
      const error = await createKafkaSink(config, logger)
        .metadata()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'KAFKA_UNREACHABLE', retriable: true, message: expect.stringMatching(/^cannot reach Kafka brokers 127\.0\.0\.1:1/) });
    });
  }
});
