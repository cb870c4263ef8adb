/**
 * Our pipelined idempotent producer on kafkajs's connections
 * (src/kafka/kafkajs/kafkajs-pipelined-producer.ts), the relay's default path,
 * against the run's real broker: several produce requests are on the wire at
 * once, a partition's batches are written in send order, and after a refused
 * batch no later batch of the same producer is written ahead of it (the broker
 * refuses them out of sequence); the producer then takes a new producer id and
 * goes on. The second test fails on a producer that resends a batch refused
 * out of sequence under a fresh producer id, as a retrying client does (tried
 * by hand: the batch sent right behind the refused one was then written).
 */
import { CompressionTypes, logLevel, type Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import { KafkajsPipelinedProducer } from '../../src/kafka/kafkajs/kafkajs-pipelined-producer.js';
import { installFastRecordEncoder } from '../../src/kafka/kafkajs/kafkajs-record-encoder.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor, readTopic } from '../support/kafka.js';
import { getStack } from '../support/stack.js';

const DEPTH = 5;

interface Internals {
  cluster: {
    findBroker(q: {
      nodeId: number;
    }): Promise<{ connectionPool: { getConnection(i: number): Promise<{ requestQueue: { inflight: Map<unknown, unknown> } }> } }>;
  };
}

async function createTopic(topic: string, config: Array<{ name: string; value: string }> = []): Promise<void> {
  const admin = kafkaFor(getStack(), 'pipelined-producer-test').admin();
  await admin.connect();
  try {
    expect(await createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 1, configEntries: config }])).toBe(true);
  } finally {
    await admin.disconnect();
  }
}

async function producer(): Promise<KafkajsPipelinedProducer> {
  installFastRecordEncoder();
  const kafka = createKafka({ brokers: getStack().brokers, clientId: uniqueName('pipelined'), logLevel: logLevel.NOTHING });
  const p = new KafkajsPipelinedProducer(kafka, {
    maxInFlightRequests: DEPTH,
    allowAutoTopicCreation: false,
    compression: CompressionTypes.None,
    requestTimeoutMs: 30_000,
  });
  await p.connect();
  return p;
}

const message = (i: number, size = 50): Message => ({ key: 'one-key', value: Buffer.alloc(size, 'x'), headers: { seq: String(i) } });

describe('the pipelined kafkajs producer', () => {
  it(`keeps up to ${DEPTH} produce requests on the wire and writes a partition's batches in send order`, async () => {
    const topic = uniqueName('pipelined_order');
    await createTopic(topic);
    const p = await producer();
    try {
      const internals = p as unknown as Internals;
      const broker = await internals.cluster.findBroker({ nodeId: 1 }).catch(() => null);
      const queue = broker ? (await broker.connectionPool.getConnection(0)).requestQueue : null;
      let most = 0;
      let sampling = true;
      const sample = () => {
        if (queue) most = Math.max(most, queue.inflight.size);
        if (sampling) setImmediate(sample);
      };
      sample();
      const N = 300;
      await Promise.all(Array.from({ length: N }, (_, i) => p.send([{ topic, messages: [message(i)] }])));
      sampling = false;
      const read = await readTopic(getStack(), topic, N);
      expect(
        read.map((m) => Number(m.headers.seq)),
        'offset order is send order',
      ).toEqual(Array.from({ length: N }, (_, i) => i));
      expect(queue, 'the broker connection was found').not.toBeNull();
      expect(most, 'requests in flight at once on the connection').toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(DEPTH);
    } finally {
      await p.disconnect();
    }
  });

  it('after a refused batch writes nothing sent behind it, then renews its producer id and goes on', async () => {
    const topic = uniqueName('pipelined_refused');
    // A batch above max.message.bytes is refused (MESSAGE_TOO_LARGE); the ones behind it are then out of sequence.
    await createTopic(topic, [{ name: 'max.message.bytes', value: '20000' }]);
    const p = await producer();
    try {
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => p.send([{ topic, messages: [message(i, i === 4 ? 40_000 : 50)] }])));
      const outcome = results.map((r) => r.status);
      expect(outcome.slice(0, 4), 'the batches before the refused one').toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect(outcome[4], 'the oversized batch').toBe('rejected');
      // Those behind it were either refused by the broker (out of sequence) or not handed over at all.
      expect(outcome.slice(5), 'the batches sent behind the refused one').toEqual(Array(7).fill('rejected'));
      await p.send([{ topic, messages: [message(100)] }]);
      const read = await readTopic(getStack(), topic, 5);
      expect(
        read.map((m) => Number(m.headers.seq)),
        'nothing written behind the refused batch; the next send after it',
      ).toEqual([0, 1, 2, 3, 100]);
    } finally {
      await p.disconnect();
    }
  });
});
