import { logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createIdempotentConsumer, type IdempotentConsumer, type IdempotentConsumerOptions } from '../../src/consumer/index.js';
import { createTestDatabase, endPool, uniqueName, type TestDatabase } from './database.js';
import { getStack } from './stack.js';
import { captureLogs } from './log-capture.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

/** A record as the relay publishes it (src/pipeline/publish/record-format/record-builder.ts). */
export interface OutboxRecord {
  /** The `id` header; null leaves it out (a poison record). */
  id: string | null;
  /** Record key and aggregate_id header; default 'order-1'. */
  key?: string;
  /** The payload, sent as its JSON text; default the testbed's `defaultPayload`. */
  payload?: unknown;
  /** Raw value text, sent as is (e.g. text that is not JSON); wins over `payload`. */
  value?: string;
}

export interface ConsumerTestbedOptions {
  clientId: string;
  /** Give `effects` a `payload jsonb` column, which recordEffect fills with the event's payload. */
  effectsPayloadColumn?: boolean;
  /** The payload of a record produced without `payload` or `value`; default { n: 1 }. */
  defaultPayload?: unknown;
  /** Headers added to every produced record after the relay's event_type, aggregate_type, aggregate_id and commit_lsn. */
  extraHeaders?: Record<string, string>;
}

export interface ConsumerTestbed {
  readonly stack: ReturnType<typeof getStack>;
  /** This file's own database (migrations applied plus an `effects` table), created before its tests. */
  readonly db: TestDatabase;
  /** A pool on `db`; the consumers' default database. */
  readonly pool: pg.Pool;
  readonly admin: Admin;
  /** Consumers stopped after each test; push one created without `consumer()`. */
  readonly consumers: IdempotentConsumer[];
  relayRecord(r: OutboxRecord): { key: string; value: string; headers: Record<string, string> };
  newTopic(prefix: string, partitions?: number): Promise<string>;
  /** Produces `records` (acks=all) in the relay's record shape. */
  produce(topic: string, records: OutboxRecord[]): Promise<void>;
  /** The group's committed offset of partition 0 (-1 = none). */
  committed(groupId: string, topic: string): Promise<number>;
  /** Effect rows per outbox id of the group. */
  effectsById(groupId: string): Promise<Record<string, number>>;
  /** The group's processed_messages ids, sorted. */
  processedIds(groupId: string): Promise<string[]>;
  waitFor(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs?: number): Promise<void>;
  /** The consumer's run() outcome, or a rejection when it has not ended within `ms`. */
  ended(c: IdempotentConsumer, ms?: number): Promise<void>;
  /** A handler that records one effect row in the consumer's transaction, and then throws where `fail` says so. */
  recordEffect(groupId: string, fail?: (id: string) => boolean): IdempotentConsumerOptions['handler'];
  /** A consumer on the stack's brokers and `pool` (unless `database` is given), with short backoff and fetch waits; stopped after the test. */
  consumer(options: Omit<IdempotentConsumerOptions, 'brokers' | 'database'> & Partial<Pick<IdempotentConsumerOptions, 'database'>>): IdempotentConsumer;
}

/**
 * Registers the hooks every idempotent-consumer test file needs: one database
 * per file with an `effects` table for handlers to write, a Kafka admin and
 * producer, and every consumer of a test stopped after it.
 */
export function consumerTestbed(options: ConsumerTestbedOptions): ConsumerTestbed {
  const stack = getStack();
  const kafka = createKafka({ brokers: stack.brokers, clientId: options.clientId, logLevel: logLevel.NOTHING });
  const withPayload = options.effectsPayloadColumn ?? false;
  const defaultPayload = options.defaultPayload ?? { n: 1 };
  let db: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let admin: Admin | undefined;
  let producer: Producer | undefined;
  const consumers: IdempotentConsumer[] = [];
  // The current test's consumer logs (kafkajs's group joins and rebalances included), printed when a wait times out.
  let logs: Array<{ groupId: string; lines: Array<Record<string, unknown>> }> = [];

  beforeAll(async () => {
    db = await createTestDatabase(stack);
    pool = new pg.Pool({ connectionString: db.url, max: 8 });
    await pool.query(
      `create table effects (n bigserial primary key, consumer_group text not null, message_id text not null${withPayload ? ', payload jsonb' : ''})`,
    );
    admin = kafka.admin();
    await admin.connect();
    // Idempotent: a send retried after NOT_LEADER_OR_FOLLOWER on a new topic must not write its records twice (tests count offsets).
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await producer.connect();
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
    logs = [];
  });
  afterAll(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    if (pool) await endPool(pool);
    await db?.drop();
  });

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`consumerTestbed: the ${what} is created in beforeAll`);
    return value;
  };

  const bed: ConsumerTestbed = {
    stack,
    get db() {
      return ready(db, 'database');
    },
    get pool() {
      return ready(pool, 'pool');
    },
    get admin() {
      return ready(admin, 'Kafka admin');
    },
    consumers,

    relayRecord(r) {
      const headers: Record<string, string> = {
        event_type: 'OrderPlaced',
        aggregate_type: 'order',
        aggregate_id: r.key ?? 'order-1',
        commit_lsn: '0/1925E80',
        ...options.extraHeaders,
      };
      if (r.id !== null) headers.id = r.id;
      return { key: r.key ?? 'order-1', value: r.value ?? JSON.stringify(r.payload ?? defaultPayload), headers };
    },

    async newTopic(prefix, partitions = 1) {
      const topic = uniqueName(prefix);
      await createTopicsAndWait(bed.admin, [{ topic, numPartitions: partitions }]);
      return topic;
    },

    async produce(topic, records) {
      await ready(producer, 'Kafka producer').send({ topic, acks: -1, messages: records.map((r) => bed.relayRecord(r)) });
    },

    async committed(groupId, topic) {
      const [t] = await bed.admin.fetchOffsets({ groupId, topics: [topic] });
      return Number(t!.partitions.find((p) => p.partition === 0)!.offset);
    },

    async effectsById(groupId) {
      const { rows } = await bed.pool.query<{ message_id: string; n: string }>(
        'select message_id, count(*) as n from effects where consumer_group = $1 group by message_id',
        [groupId],
      );
      return Object.fromEntries(rows.map((r) => [r.message_id, Number(r.n)]));
    },

    async processedIds(groupId) {
      const { rows } = await bed.pool.query<{ message_id: string }>('select message_id from processed_messages where consumer_group = $1 order by message_id', [
        groupId,
      ]);
      return rows.map((r) => r.message_id);
    },

    async waitFor(what, predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await predicate())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${formatLogs(logs)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },

    ended(c, ms = 30_000) {
      return Promise.race([
        c.run(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`consumer ${c.groupId} still running after ${ms} ms`)), ms)),
      ]);
    },

    recordEffect(groupId, fail) {
      return async (tx, event) => {
        if (withPayload) {
          await tx.query('insert into effects (consumer_group, message_id, payload) values ($1, $2, $3)', [groupId, event.id, JSON.stringify(event.payload)]);
        } else {
          await tx.query('insert into effects (consumer_group, message_id) values ($1, $2)', [groupId, event.id]);
        }
        if (fail?.(event.id)) throw new Error(`handler refuses ${event.id}`);
      };
    },

    consumer(consumerOptions) {
      const captured = captureLogs('debug');
      logs.push({ groupId: consumerOptions.groupId, lines: captured.lines });
      const c = createIdempotentConsumer({
        brokers: stack.brokers,
        database: bed.pool,
        backoff: { initialMs: 20, maxMs: 100 },
        consumer: { maxWaitTimeInMs: 100 },
        logger: captured.logger,
        kafka: { logLevel: logLevel.INFO },
        ...consumerOptions,
      });
      consumers.push(c);
      return c;
    },
  };
  return bed;
}

/** The last lines each consumer of the test logged, for a timeout's message. */
function formatLogs(logs: Array<{ groupId: string; lines: Array<Record<string, unknown>> }>): string {
  return logs
    .map(({ groupId, lines }, i) => {
      const tail = lines.slice(-60).map((l) => {
        const { level, time, msg, component, ...rest } = l;
        delete rest.pid;
        delete rest.service;
        delete rest.groupId;
        return `  ${String(time)} ${String(level)} ${String(component ?? '')} ${String(msg)} ${JSON.stringify(rest)}`;
      });
      return `\nconsumer #${i + 1} (${groupId}), last ${tail.length} of ${lines.length} log lines:\n${tail.join('\n')}`;
    })
    .join('');
}
