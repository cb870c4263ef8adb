/**
 * The consumer module's storage helpers against a real Postgres (and, for the
 * round trip, the real relay and Kafka): migration 0002, pruneProcessedMessages,
 * writeOutboxEvent.
 */
import { randomUUID } from 'node:crypto';
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createIdempotentConsumer, pruneProcessedMessages, writeOutboxEvent, type ConsumedEvent, type IdempotentConsumer } from '../../src/consumer/index.js';
import { OutboxTailError } from '../../src/shared/outbox-tail-error.js';
import { createTestDatabase, endPool, uniqueName, type TestDatabase } from '../support/database.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { createSlot } from '../support/slot.js';
import { getStack } from '../support/stack.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const stack = getStack();
let db: TestDatabase;
let pool: pg.Pool;
const relays: RelayProcess[] = [];
const consumers: IdempotentConsumer[] = [];

beforeAll(async () => {
  db = await createTestDatabase(stack);
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
});
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
  await Promise.all(relays.splice(0).map((r) => r.kill('SIGKILL')));
});
afterAll(async () => {
  if (pool) await endPool(pool);
  await db?.drop();
});

async function inTransaction<T>(fn: (tx: pg.PoolClient) => Promise<T>, outcome: 'commit' | 'rollback' = 'commit'): Promise<T> {
  const tx = await pool.connect();
  try {
    await tx.query('begin');
    const result = await fn(tx);
    await tx.query(outcome);
    return result;
  } catch (error) {
    await tx.query('rollback');
    throw error;
  } finally {
    tx.release();
  }
}

/** processed_messages rows of a group with processed_at = now() - age. */
async function seed(group: string, rows: Array<[id: string, age: string]>): Promise<void> {
  for (const [id, age] of rows) {
    await pool.query(`insert into processed_messages (consumer_group, message_id, processed_at) values ($1, $2, now() - $3::interval)`, [group, id, age]);
  }
}

async function remaining(group: string): Promise<string[]> {
  const { rows } = await pool.query<{ message_id: string }>('select message_id from processed_messages where consumer_group = $1 order by message_id', [group]);
  return rows.map((r) => r.message_id);
}

describe('migration 0002', () => {
  it('creates processed_messages with its key and processed_at index, and can run again', async () => {
    const { rows } = await pool.query<{ indexdef: string }>(`select indexdef from pg_indexes where tablename = 'processed_messages' order by indexname`);
    expect(rows.map((r) => r.indexdef)).toEqual([
      expect.stringMatching(/UNIQUE INDEX processed_messages_pkey .*\(consumer_group, message_id\)/),
      expect.stringMatching(/INDEX processed_messages_processed_at_idx .*\(processed_at\)/),
    ]);
    const { readFileSync } = await import('node:fs');
    await pool.query(readFileSync(new URL('../../migrations/0002_processed_messages.sql', import.meta.url), 'utf8'));
  });
});

describe('pruneProcessedMessages', () => {
  it('deletes the ids older than the given age, of one group or of all, and returns the count', async () => {
    const [g1, g2] = [uniqueName('prune_a'), uniqueName('prune_b')];
    await seed(g1, [
      ['old-1', '3 days'],
      ['old-2', '2 days'],
      ['new-1', '1 hour'],
    ]);
    await seed(g2, [
      ['old-3', '3 days'],
      ['new-2', '0 seconds'],
    ]);

    // An interval, one group only: the other group's old id stays.
    expect(await pruneProcessedMessages(pool, { olderThan: '1 day', consumerGroup: g1 })).toBe(2);
    expect(await remaining(g1)).toEqual(['new-1']);
    expect(await remaining(g2)).toEqual(['new-2', 'old-3']);

    // Milliseconds, every group, through a connection string: 36 h removes only the 3-day-old id.
    expect(await pruneProcessedMessages(db.url, { olderThan: 36 * 3_600_000 })).toBe(1);
    expect(await remaining(g1)).toEqual(['new-1']);
    expect(await remaining(g2)).toEqual(['new-2']);
  });

  it('deletes in chunks with batchSize and still counts every row', async () => {
    const g = uniqueName('prune_chunks');
    await seed(
      g,
      Array.from({ length: 25 }, (_, i) => [`old-${i}`, '10 days'] as [string, string]),
    );
    await seed(g, [['fresh', '1 minute']]);
    expect(await pruneProcessedMessages(pool, { olderThan: '5 days', consumerGroup: g, batchSize: 10 })).toBe(25);
    expect(await remaining(g)).toEqual(['fresh']);
  });

  it('refuses an age that is not milliseconds or an interval', async () => {
    await expect(pruneProcessedMessages(pool, { olderThan: -1 })).rejects.toThrow(/non-negative/);
    await expect(pruneProcessedMessages(pool, { olderThan: 'soon' })).rejects.toBeInstanceOf(OutboxTailError);
  });
});

describe('writeOutboxEvent', () => {
  it('writes a row in the caller transaction that reads back field for field', async () => {
    const id = await inTransaction((tx) =>
      writeOutboxEvent(tx, {
        aggregateType: 'order',
        aggregateId: 'o-1',
        eventType: 'OrderPlaced',
        payload: { total: 12.5, lines: [{ sku: 'ä-1' }] },
        headers: { tenant: 'acme' },
      }),
    );
    const given = randomUUID();
    const second = await inTransaction((tx) =>
      writeOutboxEvent(tx, { id: given, aggregateType: 'order', aggregateId: 'o-1', eventType: 'OrderPaid', payload: '{"paid": true}' }),
    );
    expect(second).toBe(given);
    const { rows } = await pool.query(
      'select id::text, aggregate_type, aggregate_id, event_type, payload, headers from outbox where id = any($1::uuid[]) order by event_type',
      [[id, given]],
    );
    expect(rows).toEqual([
      { id: given, aggregate_type: 'order', aggregate_id: 'o-1', event_type: 'OrderPaid', payload: { paid: true }, headers: null },
      {
        id,
        aggregate_type: 'order',
        aggregate_id: 'o-1',
        event_type: 'OrderPlaced',
        payload: { total: 12.5, lines: [{ sku: 'ä-1' }] },
        headers: { tenant: 'acme' },
      },
    ]);
  });

  it('leaves no row when the caller rolls back', async () => {
    const id = await inTransaction((tx) => writeOutboxEvent(tx, { aggregateType: 'order', aggregateId: 'o-2', eventType: 'E', payload: {} }), 'rollback');
    expect((await pool.query('select 1 from outbox where id = $1', [id])).rowCount).toBe(0);
  });

  it('writes to a mapped table and columns', async () => {
    await pool.query('create schema if not exists app');
    await pool.query('create table app.events (event_id text primary key, kind text, entity text, entity_id text, body jsonb, meta jsonb)');
    const id = await inTransaction((tx) =>
      writeOutboxEvent(
        tx,
        { aggregateType: 'invoice', aggregateId: 'i-1', eventType: 'Issued', payload: { n: 1 }, headers: { h: 'v' } },
        {
          table: 'app.events',
          columns: { id: 'event_id', aggregateType: 'entity', aggregateId: 'entity_id', eventType: 'kind', payload: 'body', headers: 'meta' },
        },
      ),
    );
    const { rows } = await pool.query('select * from app.events');
    expect(rows).toEqual([{ event_id: id, kind: 'Issued', entity: 'invoice', entity_id: 'i-1', body: { n: 1 }, meta: { h: 'v' } }]);
  });

  it('reports a string payload that is not JSON as a typed error', async () => {
    const error = await inTransaction((tx) => writeOutboxEvent(tx, { aggregateType: 'order', aggregateId: 'o-3', eventType: 'E', payload: 'not json' })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboxTailError);
    expect((error as OutboxTailError).code).toBe('PG_ERROR');
    expect((error as OutboxTailError).hint).toMatch(/JSON text/);
  });

  it('an event written with writeOutboxEvent reaches the consumer handler through the relay, fields intact', async () => {
    const aggregateType = uniqueName('roundtrip');
    const topic = `outbox.event.${aggregateType}`;
    const admin = createKafka({ brokers: stack.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await createTopicsAndWait(admin, [{ topic }]);
    await admin.disconnect();

    const slot = uniqueName('slot_consumer');
    await createSlot(db.url, slot);
    const relay = startRelay({ databaseUrl: db.url, brokers: stack.brokers, slot });
    relays.push(relay);
    await relay.waitForLog(isStreaming);

    const seen: ConsumedEvent[] = [];
    const groupId = uniqueName('g_roundtrip');
    const c = createIdempotentConsumer({
      brokers: stack.brokers,
      groupId,
      topics: [topic],
      database: pool,
      consumer: { maxWaitTimeInMs: 100 },
      handler: async (_tx, event) => {
        seen.push(event);
      },
    });
    consumers.push(c);
    await c.start();

    const payload = { total: 12.5, note: 'naïve ✓', nested: { a: [1, null, true] } };
    const id = await inTransaction((tx) =>
      writeOutboxEvent(tx, {
        aggregateType,
        aggregateId: 'o-42',
        eventType: 'OrderPlaced',
        payload,
        headers: { tenant: 'acme', traceparent: '00-abc-def-01' },
      }),
    );

    const deadline = Date.now() + 30_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(seen).toHaveLength(1);
    const event = seen[0]!;
    expect(event).toMatchObject({ id, aggregateType, aggregateId: 'o-42', eventType: 'OrderPlaced', payload, key: 'o-42', topic });
    expect(event.headers).toMatchObject({ tenant: 'acme', traceparent: '00-abc-def-01', id });
    expect(event.commitLsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(event.createdAt).not.toBeNull();
    expect(JSON.parse(event.rawPayload.toString('utf8'))).toEqual(payload);
    expect(await remaining(groupId)).toEqual([id]);
  });
});
