/**
 * Exactly-once mode refuses to start on a setup that would break its
 * guarantee, with a typed error that says what to do (docs/exactly-once.md "Failure
 * messages"): the offsets topic missing or not compacted (OFFSETS_TOPIC_INVALID),
 * a transactional id that already publishes for another slot
 * (TRANSACTIONAL_ID_CONFLICT). Never a silent start, never a downgrade.
 */
import kafkajs, { logLevel, type Kafka } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { describe, expect, it } from 'vitest';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import { uniqueName } from '../support/database.js';
import { isStreaming, type RelayProcess } from '../support/relay-process.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, query } from '../support/slot.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

// A CommonJS enum: ESM sees it only on the default export.
const { ConfigResourceTypes } = kafkajs;
const bed = relayTestbed();
const stack = bed.stack;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const exactlyOnce = (offsetsTopic: string, extra: Record<string, string> = {}) => ({
  OUTBOX_TAIL_DELIVERY: 'exactly-once',
  OUTBOX_TAIL_OFFSETS_TOPIC: offsetsTopic,
  ...extra,
});

async function withAdmin<T>(body: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const admin = createKafka({ brokers: stack.brokers, clientId: 'eo-errors', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.disconnect();
  }
}

/** The relay's exit within the bound, or null if it is still running (then it is killed). */
async function exitWithin(r: RelayProcess, ms: number): Promise<{ code: number | null } | null> {
  const exit = await Promise.race([r.exited, sleep(ms).then(() => null)]);
  if (!exit) await r.kill('SIGKILL');
  return exit;
}

const insertRow = async (aggregateId: string) =>
  (
    (await query<{ id: string }>(
      bed.db.url,
      `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ('order', $1, 'E', '{}') returning id::text`,
      [aggregateId],
    )) as [{ id: string }]
  )[0].id;

/** A relay on a fresh slot whose offsets topic does not exist; one row is written once it started. */
async function missingOffsetsTopic(variant?: RelayVariant) {
  const slot = uniqueName('eo_missing');
  await createSlot(bed.db.url, slot);
  const offsetsTopic = `${slot}_offsets`;
  const topic = uniqueName('eo_missing_t');
  const r = bed.relay(slot, { env: exactlyOnce(offsetsTopic, { OUTBOX_TAIL_TOPIC: `${topic}.{aggregate_type}` }), ...(variant ? { variant } : {}) });
  const collector = await bed.collect([`${topic}.order`]);
  await Promise.race([r.exited, r.waitForLog(isStreaming, 30_000).catch(() => undefined)]);
  const id = await insertRow('k-missing');
  const exit = await exitWithin(r, variant ? 10_000 : 60_000);
  if (!exit) await collector.waitUntil((c) => c.distinctIds().has(id), 30_000, `row ${id}`).catch(() => undefined);
  const policy = await withAdmin(async (a) => {
    if (!(await a.listTopics()).includes(offsetsTopic)) return null;
    const d = await a.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: offsetsTopic, configNames: ['cleanup.policy'] }],
    });
    return d.resources[0]?.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue ?? '';
  });
  return { r, exit, offsetsTopic, offsetsTopicCreated: policy !== null, policy, published: collector.distinctIds().has(id) };
}

/** Slot 1 publishes one row under a transactional id (its watermark names both); then slot 2 starts with the same id. */
async function sharedTransactionalId(variant?: RelayVariant) {
  const offsetsTopic = uniqueName('eo_shared_offsets');
  await withAdmin((a) => createOffsetsTopic(a, offsetsTopic));
  const first = uniqueName('eo_first');
  const second = uniqueName('eo_second');
  await createSlot(bed.db.url, first);
  await createSlot(bed.db.url, second);
  const sharedId = uniqueName('shared_txn_id');
  const topic = uniqueName('eo_conflict');
  const env = exactlyOnce(offsetsTopic, { OUTBOX_TAIL_TRANSACTIONAL_ID: sharedId, OUTBOX_TAIL_TOPIC: `${topic}.{aggregate_type}` });
  const collector = await bed.collect([`${topic}.order`]);
  const a = bed.relay(first, { env });
  await a.waitForLog(isStreaming, 60_000);
  const id = await insertRow('k1');
  await collector.waitUntil((c) => c.distinctIds().has(id), 30_000, `row ${id}`);
  await a.kill('SIGTERM');
  const b = bed.relay(second, { env, ...(variant ? { variant } : {}) });
  // The correct relay exits before it streams; the variant streams (waited on, not timed: a loaded machine is slow).
  if (variant) await Promise.race([b.exited, b.waitForLog(isStreaming, 60_000).catch(() => undefined)]);
  const exit = await exitWithin(b, variant ? 1_000 : 60_000);
  return { b, exit, sharedId, first };
}

describe('exactly-once startup errors', () => {
  it('exits 1 with OFFSETS_TOPIC_INVALID naming `outbox-tail init --delivery exactly-once` when the offsets topic is missing, and does not create it', async () => {
    const { r, exit, offsetsTopic, offsetsTopicCreated, published } = await missingOffsetsTopic();
    expect(exit?.code).toBe(1);
    expect(r.stderr()).toContain(`OFFSETS_TOPIC_INVALID: exactly-once delivery: the offsets topic ${offsetsTopic} does not exist`);
    expect(r.stderr()).toContain('outbox-tail init --delivery exactly-once');
    expect(r.logs.some(isStreaming)).toBe(false);
    // An auto-created topic would have the broker's delete retention: the relay must not make one.
    expect({ offsetsTopicCreated, published }).toEqual({ offsetsTopicCreated: false, published: false });
  });

  it('exits 1 with OFFSETS_TOPIC_INVALID naming the policy and the fix when the offsets topic is not compacted', async () => {
    const slot = uniqueName('eo_delete');
    await createSlot(bed.db.url, slot);
    const offsetsTopic = `${slot}_offsets`;
    await withAdmin((a) => createTopicsAndWait(a, [{ topic: offsetsTopic, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }]));
    const r = bed.relay(slot, { env: exactlyOnce(offsetsTopic) });
    const exit = await exitWithin(r, 60_000);
    expect(exit?.code).toBe(1);
    expect(r.stderr()).toContain(`OFFSETS_TOPIC_INVALID: exactly-once delivery: the offsets topic ${offsetsTopic} has cleanup.policy=delete, not compact`);
    expect(r.stderr()).toContain('cleanup.policy=compact');
    expect(r.logs.some(isStreaming)).toBe(false);
  });

  it('exits 1 with TRANSACTIONAL_ID_CONFLICT naming the other slot when the transactional id already publishes for another slot', async () => {
    const { b, exit, sharedId, first } = await sharedTransactionalId();
    expect(exit?.code).toBe(1);
    expect(b.stderr()).toContain(`TRANSACTIONAL_ID_CONFLICT: exactly-once delivery: transactional id ${sharedId} already publishes for slot ${first}`);
    expect(b.stderr()).toContain('--transactional-id');
    expect(b.logs.some(isStreaming)).toBe(false);
  });
});

describe('exactly-once startup errors, negative controls: a relay without the start checks is caught', () => {
  it('without the offsets topic check, the relay streams and the broker auto-creates the offsets topic (delete policy)', async () => {
    const { exit, policy, published } = await missingOffsetsTopic('no-start-checks');
    expect(exit).toBeNull();
    // Its watermark now expires with the broker's retention, after which the slot's backlog is published again.
    expect({ policy, published }).toEqual({ policy: 'delete', published: true });
  });

  it('without the transactional id check, the second slot streams under the first slot’s id', async () => {
    const { b, exit } = await sharedTransactionalId('no-start-checks');
    expect(exit).toBeNull();
    expect(b.logs.some(isStreaming)).toBe(true);
  });
});
