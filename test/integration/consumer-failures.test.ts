/**
 * The idempotent consumer's failure policy against real Kafka and Postgres:
 * dead-letter after maxAttempts, poison records (no `id` header, value not
 * JSON) under both policies. A record is never skipped silently: it is either
 * applied, dead-lettered with a reason, or its offset stays uncommitted and the
 * consumer stops.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OutboxTailError } from '../../src/shared/outbox-tail-error.js';
import { consumerTestbed } from '../support/consumer-testbed.js';
import { uniqueName } from '../support/database.js';
import { readTopic } from '../support/kafka.js';

// Records carry a card number in their payload: the dead letter must point at the record, never copy it.
const bed = consumerTestbed({ clientId: 'consumer-failures-test', defaultPayload: { secret: 'card-4242' } });
const { stack, newTopic, produce, committed, effectsById, processedIds, waitFor, ended, recordEffect, consumer } = bed;

const json = (v: string | null) => JSON.parse(v ?? 'null') as Record<string, unknown>;

// ---- tests -----------------------------------------------------------------

describe('dead-letter policy', () => {
  it('dead-letters a record after maxAttempts handler failures, marks its id processed and moves on', async () => {
    const topic = await newTopic('dl');
    const dlq = await newTopic('dl_dlq');
    const groupId = uniqueName('g_dl');
    const [a, x, b] = [randomUUID(), randomUUID(), randomUUID()];
    await produce(topic, [{ id: a }, { id: x, key: 'order-9' }, { id: b }]);
    const c = consumer({
      groupId,
      topics: [topic],
      maxAttempts: 3,
      onFailure: 'dead-letter',
      deadLetterTopic: dlq,
      handler: recordEffect(groupId, (id) => id === x),
    });
    await c.start();
    await waitFor('3 offsets committed', async () => (await committed(groupId, topic)) === 3);
    expect(c.stats).toMatchObject({ processed: 2, handlerFailures: 3, deadLettered: 1 });
    expect(await effectsById(groupId)).toEqual({ [a]: 1, [b]: 1 });
    expect(await processedIds(groupId)).toEqual([a, b, x].sort());

    const [letter] = await readTopic(stack, dlq, 1);
    expect(letter!.key).toBe('order-9');
    expect(letter!.headers).toMatchObject({ id: x, original_topic: topic, original_partition: '0', original_offset: '1', consumer_group: groupId });
    const body = json(letter!.value);
    expect(body).toMatchObject({
      id: x,
      original_topic: topic,
      original_partition: 0,
      original_offset: '1',
      attempts: 3,
      consumer_group: groupId,
      event_type: 'OrderPlaced',
    });
    expect(body.error).toContain(`handler refuses ${x}`);
    // A pointer, never the payload.
    expect(letter!.value).not.toContain('card-4242');

    // A later replay of x is a duplicate: skipped, not dead-lettered again.
    await produce(topic, [{ id: x, key: 'order-9' }]);
    await waitFor('4 offsets committed', async () => (await committed(groupId, topic)) === 4);
    expect(c.stats).toMatchObject({ duplicatesSkipped: 1, deadLettered: 1, handlerFailures: 3 });
  });

  it('dead-letters a record without an id header (poison) with the reason, and applies the others', async () => {
    const topic = await newTopic('poisondl');
    const dlq = await newTopic('poisondl_dlq');
    const groupId = uniqueName('g_poisondl');
    const [a, b] = [randomUUID(), randomUUID()];
    await produce(topic, [{ id: a }, { id: null, key: 'order-7' }, { id: b }]);
    const c = consumer({ groupId, topics: [topic], onFailure: 'dead-letter', deadLetterTopic: dlq, handler: recordEffect(groupId) });
    await c.start();
    await waitFor('3 offsets committed', async () => (await committed(groupId, topic)) === 3);
    expect(c.stats).toMatchObject({ processed: 2, poisonRecords: 1, deadLettered: 1, handlerFailures: 0 });
    expect(await effectsById(groupId)).toEqual({ [a]: 1, [b]: 1 });
    const [letter] = await readTopic(stack, dlq, 1);
    expect(letter!.headers.id).toBeUndefined();
    expect(letter!.headers).toMatchObject({ original_topic: topic, original_offset: '1' });
    const body = json(letter!.value);
    expect(body).toMatchObject({ id: null, original_offset: '1', attempts: 1 });
    expect(body.error).toMatch(/poison: record has no "id" header/);
  });
});

describe('stop policy', () => {
  it('stops on a record without an id header (poison) with a clear error and does not commit its offset', async () => {
    const topic = await newTopic('poison');
    const groupId = uniqueName('g_poison');
    const [a, b] = [randomUUID(), randomUUID()];
    await produce(topic, [{ id: a }, { id: null }, { id: b }]);
    const c = consumer({ groupId, topics: [topic], onFailure: 'stop', handler: recordEffect(groupId) });
    const error = await ended(c).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutboxTailError);
    expect((error as OutboxTailError).code).toBe('CONSUMER_POISON_RECORD');
    expect((error as OutboxTailError).message).toMatch(new RegExp(`poison record at ${topic}/0@1: record has no "id" header`));
    expect(c.stats).toMatchObject({ processed: 1, poisonRecords: 1, deadLettered: 0, state: 'failed' });
    expect(await committed(groupId, topic)).toBe(1);
    expect(await effectsById(groupId)).toEqual({ [a]: 1 });
  });

  it('stops on a record whose value is not JSON, naming its outbox id', async () => {
    const topic = await newTopic('notjson');
    const groupId = uniqueName('g_notjson');
    const x = randomUUID();
    await produce(topic, [{ id: x, value: '{"truncated": ' }]);
    const c = consumer({ groupId, topics: [topic], handler: recordEffect(groupId) });
    await expect(ended(c)).rejects.toThrow(new RegExp(`value of outbox id ${x} is not JSON`));
    expect(await committed(groupId, topic)).toBe(-1);
    expect(await processedIds(groupId)).toEqual([]);
  });
});

describe('database failures', () => {
  it('a dropped database connection is retried without counting against the record, so it is never dead-lettered', async () => {
    const topic = await newTopic('dropconn');
    const dlq = await newTopic('dropconn_dlq');
    const groupId = uniqueName('g_dropconn');
    const x = randomUUID();
    await produce(topic, [{ id: x }]);
    let drops = 2;
    const c = consumer({
      groupId,
      topics: [topic],
      maxAttempts: 1, // a single counted failure would dead-letter it
      onFailure: 'dead-letter',
      deadLetterTopic: dlq,
      handler: async (tx, event) => {
        await tx.query('insert into effects (consumer_group, message_id) values ($1, $2)', [groupId, event.id]);
        // The server ends this session (SQLSTATE 57P01), as in a failover or a restart.
        if (drops-- > 0) await tx.query('select pg_terminate_backend(pg_backend_pid())');
      },
    });
    await c.start();
    await waitFor('offset 1 committed', async () => (await committed(groupId, topic)) === 1);
    expect(c.stats).toMatchObject({ processed: 1, transientRetries: 2, handlerFailures: 0, deadLettered: 0 });
    expect(await effectsById(groupId)).toEqual({ [x]: 1 });
  });

  it('stops with a clear error when processed_messages is missing, without committing', async () => {
    const topic = await newTopic('notable');
    const groupId = uniqueName('g_notable');
    await produce(topic, [{ id: randomUUID() }]);
    const c = consumer({ groupId, topics: [topic], maxAttempts: 2, processedTable: 'no_such_table', handler: recordEffect(groupId) });
    const error = (await ended(c).catch((e: unknown) => e)) as OutboxTailError;
    expect(error).toBeInstanceOf(OutboxTailError);
    expect(error.code).toBe('PG_ERROR');
    expect(error.message).toMatch(/relation "no_such_table" does not exist/);
    expect(error.hint).toMatch(/0002_processed_messages\.sql/);
    expect(await committed(groupId, topic)).toBe(-1);
  });
});
