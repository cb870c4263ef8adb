/**
 * A read_committed kafkajs consumer must never hand out a record of an aborted
 * Kafka transaction. Two transactional producers (our transaction lanes are
 * two) interleave their transactions in one partition and both abort; a
 * consumer that starts inside that range (a group resuming from its committed
 * offset after a broker restart) or one whose broker lists the later-starting
 * transaction first got aborted records from kafkajs 2.2.4's own filter.
 * Each case runs on kafkajs's own filter first (the negative control: it lets
 * at least one aborted record through) and then with ours (none).
 */
import { createRequire } from 'node:module';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import { installAbortedFilterFix } from '../../src/kafka/kafkajs/kafkajs-aborted-filter-fix.js';
import { uniqueName } from '../support/database.js';
import { getStack } from '../support/stack.js';

const stack = getStack();

/** Puts kafkajs's own filter back (the fix keeps the original fetch beside its own). */
function uninstallAbortedFilterFix(): void {
  const proto = (createRequire(import.meta.url)('kafkajs/src/broker/index.js') as { prototype: Record<string, unknown> }).prototype;
  if (proto.__outboxTailAbortedFilter) {
    proto.fetch = proto.__outboxTailAbortedFilter;
    delete proto.__outboxTailAbortedFilter;
  }
}

/** Keys a read_committed group whose committed offset is `offset` reads from partition 0 of partition 0 up to the plain record 'end'. */
async function readCommitted(kafka: Kafka, topic: string, offset: string): Promise<string[]> {
  const groupId = uniqueName('aborted-filter');
  // The group's committed offset: where a consumer resumes, as after a rejoin.
  const admin = kafka.admin();
  await admin.connect();
  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset }] }).finally(() => admin.disconnect());
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  const keys: string[] = [];
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        const key = message.key?.toString() ?? '';
        if (key === 'end') done();
        else keys.push(key);
      },
    });
    await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`no 'end' record read from ${topic} within 30 s`)), 30_000))]);
    return keys;
  } finally {
    await consumer.disconnect();
  }
}

/**
 * Writes, in partition 0: offsets 0..3 = a1 (producer A), b1 (B), a2 (A), b2 (B), both aborted in `abortOrder`
 * (markers at 4 and 5), then 'c' committed by A and the plain record 'end'.
 */
async function interleavedAborts(kafka: Kafka, topic: string, abortOrder: 'A first' | 'B first'): Promise<void> {
  const producers: Producer[] = [];
  const transactional = async (id: string) => {
    const p = kafka.producer({ transactionalId: uniqueName(id), maxInFlightRequests: 1, idempotent: true });
    producers.push(p);
    await p.connect();
    return p;
  };
  try {
    const [a, b] = [await transactional('lane-a'), await transactional('lane-b')];
    const [ta, tb] = [await a.transaction(), await b.transaction()];
    const send = (t: typeof ta, key: string) => t.send({ topic, acks: -1, messages: [{ key, value: key, partition: 0 }] });
    await send(ta, 'a1');
    await send(tb, 'b1');
    await send(ta, 'a2');
    await send(tb, 'b2');
    if (abortOrder === 'A first') {
      await ta.abort();
      await tb.abort();
    } else {
      await tb.abort();
      await ta.abort();
    }
    const tc = await a.transaction();
    await send(tc, 'c');
    await tc.commit();
    const plain = kafka.producer();
    producers.push(plain);
    await plain.connect();
    await plain.send({ topic, acks: -1, messages: [{ key: 'end', value: 'end', partition: 0 }] });
  } finally {
    await Promise.all(producers.map((p) => p.disconnect()));
  }
}

describe('a read_committed kafkajs consumer never hands out a record of an aborted Kafka transaction', () => {
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'aborted-filter-test', logLevel: logLevel.NOTHING });
  let admin: ReturnType<Kafka['admin']>;
  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
  });
  afterAll(async () => {
    installAbortedFilterFix();
    await admin.disconnect();
  });

  const cases = [
    { name: 'resuming inside two producers’ aborted transactions (from offset 3)', abortOrder: 'A first' as const, offset: '3' },
    { name: 'reading from the start when the later-starting transaction aborted first', abortOrder: 'B first' as const, offset: '0' },
  ];
  for (const c of cases) {
    it(`${c.name}: only the committed record`, async () => {
      const topic = uniqueName('aborted-filter');
      await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }]);
      await interleavedAborts(kafka, topic, c.abortOrder);

      uninstallAbortedFilterFix();
      const stock = await readCommitted(new Kafka({ brokers: stack.brokers, clientId: 'aborted-filter-stock', logLevel: logLevel.NOTHING }), topic, c.offset);
      installAbortedFilterFix();
      const fixed = await readCommitted(kafka, topic, c.offset);

      // The negative control: kafkajs's own filter lets at least one aborted record (a1, a2, b1, b2) through.
      expect(
        stock.filter((k) => k !== 'c'),
        `kafkajs's own filter read ${JSON.stringify(stock)}`,
      ).not.toEqual([]);
      expect(fixed, 'with the fix, a read_committed consumer sees only the committed record').toEqual(['c']);
    }, 60_000);
  }
});
