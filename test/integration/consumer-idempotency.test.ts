/**
 * The idempotent consumer against real Kafka and Postgres: effects once per
 * outbox id, offsets committed only after the DB transaction, rollback of the
 * processed id with the handler's effects, batch mode, graceful stop.
 *
 * Effects are rows the handler writes with the consumer's transaction into
 * `effects`; "applied once" means one effects row per outbox id.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createIdempotentConsumer, type IdempotentConsumerOptions } from '../../src/consumer/index.js';
import { OutboxTailError } from '../../src/shared/outbox-tail-error.js';
import { consumerTestbed } from '../support/consumer-testbed.js';
import { uniqueName } from '../support/database.js';

const bed = consumerTestbed({
  clientId: 'consumer-idempotency-test',
  effectsPayloadColumn: true,
  defaultPayload: { n: 1 },
  extraHeaders: { created_at: '2026-11-30 00:00:00+00' },
});
const { stack, consumers, newTopic, produce, committed, effectsById, processedIds, waitFor, ended, recordEffect, consumer } = bed;

const ids = (n: number) => Array.from({ length: n }, () => randomUUID());

// ---- tests -----------------------------------------------------------------

describe('idempotent consumer', () => {
  it('applies each outbox id once even when Kafka holds it three times', async () => {
    const topic = await newTopic('dup');
    const groupId = uniqueName('g_dup');
    const [a, b, c] = ids(3) as [string, string, string];
    // Two copies now, interleaved (a relay replay), at different offsets.
    await produce(topic, [{ id: a }, { id: b }, { id: a }, { id: c }, { id: b }, { id: c }]);
    const first = consumer({ groupId, topics: [topic], handler: recordEffect(groupId) });
    await first.start();
    await waitFor('6 offsets committed', async () => (await committed(groupId, topic)) === 6);
    expect(first.stats).toMatchObject({ processed: 3, duplicatesSkipped: 3 });
    await first.stop();

    // The third copy arrives after a restart: a new consumer instance of the same group.
    await produce(topic, [{ id: c }, { id: a }, { id: b }]);
    const second = consumer({ groupId, topics: [topic], handler: recordEffect(groupId) });
    await second.start();
    await waitFor('9 offsets committed', async () => (await committed(groupId, topic)) === 9);
    expect(second.stats).toMatchObject({ processed: 0, duplicatesSkipped: 3 });

    expect(await effectsById(groupId)).toEqual({ [a]: 1, [b]: 1, [c]: 1 });
    expect(await processedIds(groupId)).toEqual([a, b, c].sort());
  });

  it('does not commit the offset of a record whose handler failed, and applies it after a restart', async () => {
    const topic = await newTopic('fail');
    const groupId = uniqueName('g_fail');
    const [a, x, b] = ids(3) as [string, string, string];
    await produce(topic, [{ id: a }, { id: x }, { id: b }]);

    const failing = consumer({ groupId, topics: [topic], maxAttempts: 3, onFailure: 'stop', handler: recordEffect(groupId, (id) => id === x) });
    const outcome = await ended(failing).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(outcome).toBeInstanceOf(OutboxTailError);
    expect((outcome as OutboxTailError).code).toBe('CONSUMER_HANDLER_FAILED');
    expect(outcome!.message).toContain(x);
    expect(failing.stats).toMatchObject({ processed: 1, handlerFailures: 3, deadLettered: 0, state: 'failed' });
    // a's offset is committed, x's is not: the group resumes at x.
    expect(await committed(groupId, topic)).toBe(1);
    expect(await effectsById(groupId)).toEqual({ [a]: 1 });

    const healed = consumer({ groupId, topics: [topic], handler: recordEffect(groupId) });
    await healed.start();
    await waitFor('3 offsets committed', async () => (await committed(groupId, topic)) === 3);
    expect(await effectsById(groupId)).toEqual({ [a]: 1, [x]: 1, [b]: 1 });
    expect(healed.stats).toMatchObject({ processed: 2, duplicatesSkipped: 0 });
  });

  it('a handler error rolls back the processed_messages row with the handler effects', async () => {
    const topic = await newTopic('rollback');
    const groupId = uniqueName('g_rollback');
    const [x] = ids(1) as [string];
    await produce(topic, [{ id: x }]);

    const failing = consumer({ groupId, topics: [topic], maxAttempts: 2, onFailure: 'stop', handler: recordEffect(groupId, () => true) });
    await expect(ended(failing)).rejects.toThrow(x);
    // Neither the effect nor the processed id survived the failed attempts.
    expect(await processedIds(groupId)).toEqual([]);
    expect(await effectsById(groupId)).toEqual({});

    // So a later attempt still applies it (it is not mistaken for a duplicate).
    const healed = consumer({ groupId, topics: [topic], handler: recordEffect(groupId) });
    await healed.start();
    await waitFor('offset 1 committed', async () => (await committed(groupId, topic)) === 1);
    expect(await effectsById(groupId)).toEqual({ [x]: 1 });
    expect(await processedIds(groupId)).toEqual([x]);
  });

  it('treats a handler that swallowed a failed statement as failed (COMMIT answered ROLLBACK)', async () => {
    const topic = await newTopic('swallow');
    const groupId = uniqueName('g_swallow');
    const [x] = ids(1) as [string];
    await produce(topic, [{ id: x }]);
    let calls = 0;
    const c = consumer({
      groupId,
      topics: [topic],
      maxAttempts: 3,
      handler: async (tx, event) => {
        calls += 1;
        await tx.query('insert into effects (consumer_group, message_id) values ($1, $2)', [groupId, event.id]);
        // First attempt: a statement fails and the handler hides the error; the transaction is aborted.
        if (calls === 1) await tx.query('select 1/0').catch(() => undefined);
      },
    });
    await c.start();
    await waitFor('offset 1 committed', async () => (await committed(groupId, topic)) === 1);
    expect(calls).toBe(2);
    expect(c.stats).toMatchObject({ processed: 1, handlerFailures: 1 });
    expect(await effectsById(groupId)).toEqual({ [x]: 1 });
  });

  it('retries a handler that fails transiently and applies the record once', async () => {
    const topic = await newTopic('retry');
    const groupId = uniqueName('g_retry');
    const [a, x] = ids(2) as [string, string];
    await produce(topic, [{ id: a }, { id: x }]);
    let failuresLeft = 2;
    const c = consumer({
      groupId,
      topics: [topic],
      maxAttempts: 3,
      handler: recordEffect(groupId, (id) => id === x && failuresLeft-- > 0),
    });
    await c.start();
    await waitFor('offset 2 committed', async () => (await committed(groupId, topic)) === 2);
    expect(c.stats).toMatchObject({ processed: 2, handlerFailures: 2 });
    expect(await effectsById(groupId)).toEqual({ [a]: 1, [x]: 1 });
  });

  it('stop() lets the record in flight finish and commits its offset before disconnecting', async () => {
    const topic = await newTopic('stop');
    const groupId = uniqueName('g_stop');
    const [a, b] = ids(2) as [string, string];
    await produce(topic, [{ id: a }, { id: b }]);
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const c = consumer({
      groupId,
      topics: [topic],
      handler: async (tx, event) => {
        entered();
        await new Promise((r) => setTimeout(r, 1_000));
        await recordEffect(groupId)(tx, event);
      },
    });
    await c.start();
    await inHandler; // a's handler runs
    await c.stop();
    expect(c.stats.state).toBe('stopped');
    // a finished and its offset was committed although kafkajs was already stopping; b was not started.
    expect(await effectsById(groupId)).toEqual({ [a]: 1 });
    expect(await committed(groupId, topic)).toBe(1);
  });

  it('accepts a connection string and a typed payload parser', async () => {
    const topic = await newTopic('typed');
    const groupId = uniqueName('g_typed');
    const [a] = ids(1) as [string];
    await produce(topic, [{ id: a, key: 'order-42', payload: { total: 12.5, items: ['x'] } }]);
    const seen: unknown[] = [];
    const c = createIdempotentConsumer<{ total: number }>({
      brokers: stack.brokers,
      groupId,
      topics: [topic],
      database: bed.db.url,
      parsePayload: (json) => {
        const p = json as { total?: unknown };
        if (typeof p.total !== 'number') throw new Error('total must be a number');
        return { total: p.total };
      },
      handler: async (tx, event) => {
        seen.push({ ...event, rawPayload: event.rawPayload.toString('utf8') });
        await tx.query('insert into effects (consumer_group, message_id) values ($1, $2)', [groupId, event.id]);
      },
    });
    consumers.push(c);
    await c.start();
    await waitFor('offset 1 committed', async () => (await committed(groupId, topic)) === 1);
    expect(seen).toEqual([
      expect.objectContaining({
        id: a,
        aggregateType: 'order',
        aggregateId: 'order-42',
        eventType: 'OrderPlaced',
        payload: { total: 12.5 },
        rawPayload: JSON.stringify({ total: 12.5, items: ['x'] }),
        commitLsn: '0/1925E80',
        key: 'order-42',
        topic,
        partition: 0,
        offset: '0',
        headers: expect.objectContaining({ id: a, commit_lsn: '0/1925E80', aggregate_type: 'order' }),
      }),
    ]);
    await c.stop();
    expect(c.stats.state).toBe('stopped');
  });
});

describe('consumer groups', () => {
  it('two members of one group apply each id once across a rebalance', async () => {
    const topic = await newTopic('rebalance', 3);
    const groupId = uniqueName('g_rebalance');
    const unique = ids(30);
    // Every id twice, keyed so that all three partitions get records; a copy lands where the original did.
    const records = [...unique, ...unique].map((id) => ({ id, key: `order-${unique.indexOf(id) % 10}` }));
    await produce(topic, records);
    const written = (await bed.admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
    expect(written, 'the test producer wrote each record once').toBe(60);
    const slow = async (...args: Parameters<IdempotentConsumerOptions['handler']>) => {
      await new Promise((r) => setTimeout(r, 30));
      await recordEffect(groupId)(...args);
    };
    const first = consumer({ groupId, topics: [topic], handler: slow });
    await first.start();
    await waitFor('10 effects', async () => Object.keys(await effectsById(groupId)).length >= 10);
    const second = consumer({ groupId, topics: [topic], handler: slow });
    await second.start(); // joins: the group rebalances while the first member is mid-stream
    const totalCommitted = async () => {
      const [t] = await bed.admin.fetchOffsets({ groupId, topics: [topic] });
      return t!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    await waitFor('60 offsets committed', async () => (await totalCommitted()) === 60, 60_000);
    expect(await effectsById(groupId)).toEqual(Object.fromEntries(unique.map((id) => [id, 1])));
    expect(first.stats.processed + second.stats.processed).toBe(30);
    expect(first.stats.duplicatesSkipped + second.stats.duplicatesSkipped).toBeGreaterThanOrEqual(30);
  });
});

describe('offset commits', () => {
  it.each([
    ['one transaction per record', undefined],
    ['batch mode', { maxRecords: 4 }],
  ])('never has an offset committed while the transaction of its record is still open (%s)', async (_mode, batch) => {
    const topic = await newTopic('window');
    const groupId = uniqueName('g_window');
    const all = ids(10);
    await produce(
      topic,
      all.map((id) => ({ id })),
    );
    const seen: Array<{ offset: number; committed: number }> = [];
    const c = consumer({
      groupId,
      topics: [topic],
      ...(batch ? { batch } : {}),
      handler: async (tx, event) => {
        // Inside the open transaction: what does Kafka say the group has committed?
        seen.push({ offset: Number(event.offset), committed: await committed(groupId, topic) });
        await recordEffect(groupId)(tx, event);
      },
    });
    await c.start();
    await waitFor('10 offsets committed', async () => (await committed(groupId, topic)) === 10);
    expect(seen.map((s) => s.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The committed offset is the next one to read: it may reach this record only after its transaction committed.
    for (const s of seen) expect(s.committed, `committed offset while record ${s.offset} was in its transaction`).toBeLessThanOrEqual(s.offset);
    expect(await effectsById(groupId)).toEqual(Object.fromEntries(all.map((id) => [id, 1])));
  });
});

describe('idempotent consumer, batch mode', () => {
  it('applies each id once with one transaction per batch and commits the batch offsets', async () => {
    const topic = await newTopic('batch');
    const groupId = uniqueName('g_batch');
    const unique = ids(10);
    // 20 records: every id twice, the copies 10 offsets apart (different batches) and some in the same batch.
    const records = [...unique, ...unique].map((id) => ({ id }));
    records.splice(3, 0, { id: unique[2]! }); // a copy right next to the original: same batch, same transaction
    await produce(topic, records);
    const c = consumer({ groupId, topics: [topic], batch: { maxRecords: 5 }, handler: recordEffect(groupId) });
    await c.start();
    await waitFor('21 offsets committed', async () => (await committed(groupId, topic)) === 21);
    expect(c.stats).toMatchObject({ processed: 10, duplicatesSkipped: 11, handlerFailures: 0 });
    expect(await effectsById(groupId)).toEqual(Object.fromEntries(unique.map((id) => [id, 1])));
    // One transaction and one offset commit per batch of up to 5 (21 records: 5 if Kafka returns them in one fetch).
    expect(c.stats.offsetCommits).toBeGreaterThanOrEqual(5);
    expect(c.stats.offsetCommits).toBeLessThanOrEqual(7);
  });

  it('a handler failure rolls back the whole batch and no offset at or past the failed record is committed', async () => {
    const topic = await newTopic('batchfail');
    const groupId = uniqueName('g_batchfail');
    const all = ids(10);
    const x = all[5]!;
    await produce(
      topic,
      all.map((id) => ({ id })),
    );
    const failing = consumer({
      groupId,
      topics: [topic],
      batch: { maxRecords: 10 },
      maxAttempts: 2,
      onFailure: 'stop',
      handler: recordEffect(groupId, (id) => id === x),
    });
    await expect(ended(failing)).rejects.toThrow(x);
    // The batch transaction failed and rolled back; its records were then applied one by one up to x.
    expect(await committed(groupId, topic)).toBe(5);
    expect(await effectsById(groupId)).toEqual(Object.fromEntries(all.slice(0, 5).map((id) => [id, 1])));
    expect((await processedIds(groupId)).length).toBe(5);

    const healed = consumer({ groupId, topics: [topic], batch: { maxRecords: 10 }, handler: recordEffect(groupId) });
    await healed.start();
    await waitFor('10 offsets committed', async () => (await committed(groupId, topic)) === 10);
    expect(await effectsById(groupId)).toEqual(Object.fromEntries(all.map((id) => [id, 1])));
  });
});
