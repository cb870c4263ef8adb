import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { confirmedFlushLsn, createSlot, query } from '../support/slot.js';
import { peekTransactions } from '../support/witness-slot.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const bed = relayTestbed();
const stack = bed.stack;
const relay = (slot: string, env: Record<string, string> = {}, args: string[] = []) => bed.relay(slot, { env, args });
const collect = (topics: string[]) => bed.collect(topics);

const insert = (type: string, aggregateId: string | null, payload = '{}') =>
  query<{ id: string }>(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', $3) returning id::text`, [
    type,
    aggregateId,
    payload,
  ]).then((r) => r[0]!.id);

describe('startup errors', () => {
  it('exits 3 naming the slot and the fix when the slot is missing', async () => {
    const slot = uniqueName('nosuch');
    const r = relay(slot);
    expect((await r.exited).code).toBe(3);
    expect(r.stderr()).toContain(`SLOT_MISSING: replication slot ${slot} does not exist`);
    expect(r.stderr()).toContain('outbox-tail init');
  });

  it('exits 2 naming each invalid option and its source', async () => {
    const r = relay(uniqueName('s'), { OUTBOX_TAIL_BATCH_MAX_MESSAGES: 'many', OUTBOX_TAIL_ON_OVERSIZE: 'dead-letter' }, ['--topic', 'x.{nope}']);
    expect((await r.exited).code).toBe(2);
    const err = r.stderr();
    expect(err).toContain('--batch-max-messages / OUTBOX_TAIL_BATCH_MAX_MESSAGES');
    expect(err).toContain('given "many" by env OUTBOX_TAIL_BATCH_MAX_MESSAGES');
    expect(err).toContain('--topic / OUTBOX_TAIL_TOPIC: unknown placeholder');
  });

  it('exits 3 when the publication does not publish the table, with the SQL to fix it', async () => {
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const r = relay(slot, { OUTBOX_TAIL_PUBLICATION: 'no_such_publication' });
    expect((await r.exited).code).toBe(3);
    expect(r.stderr()).toContain('PUBLICATION_MISSING: publication no_such_publication does not exist');
    expect(r.stderr()).toContain('CREATE PUBLICATION no_such_publication FOR TABLE public.outbox');
  });

  it('exits 3 when the broker is unreachable', async () => {
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const r = bed.relay(slot, { brokers: ['127.0.0.1:1'], env: { OUTBOX_TAIL_CONNECT_TIMEOUT_MS: '1000' } });
    expect((await r.exited).code).toBe(3);
    expect(r.stderr()).toContain('KAFKA_UNREACHABLE: cannot reach Kafka brokers 127.0.0.1:1');
  });
});

describe('oversized and malformed rows', () => {
  async function smallTopic(type: string): Promise<string> {
    const topic = `outbox.event.${type}`;
    const admin = createKafka({ brokers: stack.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await createTopicsAndWait(admin, [{ topic, configEntries: [{ name: 'max.message.bytes', value: '20000' }] }]);
    await admin.disconnect();
    return topic;
  }

  it('with --on-oversize=fail halts naming the outbox id and never confirms past it', async () => {
    const type = uniqueName('big');
    const topic = await smallTopic(type);
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    // Only peeked: where the big row's commit record starts. The relay may confirm past other WAL (other
    // test files share the server) but never past that: a commit before the confirmed LSN is skipped.
    const witness = `${slot}_w`;
    await createSlot(bed.db.url, witness);
    const collector = await collect([topic]);
    const r = relay(slot);
    await r.waitForLog(isStreaming);
    await insert(type, 'before');
    await collector.waitForDistinct(1);
    const bigId = await insert(type, 'big', JSON.stringify({ blob: 'x'.repeat(50_000) }));
    await insert(type, 'after');
    expect((await r.exited).code).toBe(5);
    expect(r.stderr()).toContain(`MESSAGE_TOO_LARGE: outbox row id=${bigId}`);
    expect(r.stderr()).toContain('--on-oversize=dead-letter');
    const bigTxn = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('big'));
    expect(bigTxn).toBeDefined();
    expect(await confirmedFlushLsn(bed.db.url, slot)).toBeLessThanOrEqual(bigTxn!.commitLsn);
    expect(collector.records.map((x) => x.key)).toEqual(['before']);
  });

  it('with --on-oversize=dead-letter publishes a pointer record and delivers everything after it', async () => {
    const type = uniqueName('big');
    const topic = await smallTopic(type);
    const dlt = uniqueName('dlt');
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const collector = await collect([topic, dlt]);
    const r = relay(slot, { OUTBOX_TAIL_ON_OVERSIZE: 'dead-letter', OUTBOX_TAIL_DEAD_LETTER_TOPIC: dlt });
    await r.waitForLog(isStreaming);
    const bigId = await insert(type, 'big', JSON.stringify({ blob: 'x'.repeat(50_000) }));
    await insert(type, 'after');
    await collector.waitUntil((c) => c.records.some((x) => x.key === 'after') && c.records.some((x) => x.topic === dlt));
    const pointer = collector.records.find((x) => x.topic === dlt)!;
    expect(JSON.parse(pointer.value!.toString())).toMatchObject({ id: bigId, original_topic: topic, reason: expect.stringMatching(/^oversize: \d+ bytes$/) });
    expect(pointer.value!.length).toBeLessThan(1000);
    expect(collector.records.filter((x) => x.topic === topic).map((x) => x.key)).toEqual(['after']);
  });

  it('with --on-malformed=fail halts on a NULL mapped column, naming the id; with dead-letter it goes on', async () => {
    await query(bed.db.url, 'alter table outbox alter column aggregate_id drop not null');
    const type = uniqueName('mal');
    const topic = `outbox.event.${type}`;
    const dlt = uniqueName('dlt');
    const collector = await collect([topic, dlt]);

    const failSlot = uniqueName('s');
    await createSlot(bed.db.url, failSlot);
    const dlSlot = uniqueName('s');
    await createSlot(bed.db.url, dlSlot);
    await insert(type, 'ok-1');
    const badId = await insert(type, null);
    await insert(type, 'ok-2');

    const failing = relay(failSlot);
    expect((await failing.exited).code).toBe(5);
    expect(failing.stderr()).toContain(`MALFORMED_ROW: outbox row id=${badId} in public.outbox is malformed: column(s) aggregate_id NULL`);
    expect(collector.records.map((x) => x.key)).toEqual(['ok-1']);

    const deadLettering = relay(dlSlot, { OUTBOX_TAIL_ON_MALFORMED: 'dead-letter', OUTBOX_TAIL_DEAD_LETTER_TOPIC: dlt });
    await collector.waitUntil((c) => c.records.some((x) => x.key === 'ok-2') && c.records.some((x) => x.topic === dlt));
    const pointer = collector.records.find((x) => x.topic === dlt)!;
    expect(JSON.parse(pointer.value!.toString())).toMatchObject({ id: badId, reason: 'malformed: column(s) aggregate_id NULL' });
    await deadLettering.kill();
    await query(bed.db.url, `delete from outbox where aggregate_id is null`);
    await query(bed.db.url, 'alter table outbox alter column aggregate_id set not null');
  });
});
