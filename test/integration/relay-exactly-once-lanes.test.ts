/**
 * Rule E7 (docs/architecture.md): the exactly-once sink's transactional
 * producers take turns, and connect() fences every lane before anything is
 * read or published. A predecessor killed or paused with a Kafka transaction
 * open on its second lane (<transactional-id>.2) must not be able to commit
 * it after the new relay started: it would put records in Kafka behind the
 * new relay's back (duplicates once the new relay publishes the same rows).
 */
import { logLevel, type Transaction } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { describe, expect, it } from 'vitest';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, query } from '../support/slot.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const bed = relayTestbed();
const stack = bed.stack;
const kafka = () => createKafka({ brokers: stack.brokers, clientId: 'eo-lanes', logLevel: logLevel.NOTHING });

/** A predecessor's open Kafka transaction on the second lane, then a relay starts, publishes a row, and the predecessor tries to commit. */
async function predecessorOnSecondLane(variant?: RelayVariant) {
  const slot = uniqueName('eo_lanes');
  await createSlot(bed.db.url, slot);
  const offsetsTopic = `${slot}_offsets`;
  const topic = `${uniqueName('eo_lanes_t')}.order`;
  const admin = kafka().admin();
  await admin.connect();
  await createOffsetsTopic(admin, offsetsTopic);
  // One partition: the predecessor's open transaction and the relay's records share it (and its last stable offset).
  await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }]);
  await admin.disconnect();

  const predecessor = kafka().producer({ transactionalId: `outbox-tail-${slot}.2`, idempotent: true, maxInFlightRequests: 1 });
  await predecessor.connect();
  const txn: Transaction = await predecessor.transaction();
  await txn.send({ topic, acks: -1, messages: [{ key: 'predecessor', value: 'published by the predecessor after the new relay started' }] });

  const collector = await bed.collect([topic]);
  const relay = bed.relay(slot, {
    env: { OUTBOX_TAIL_DELIVERY: 'exactly-once', OUTBOX_TAIL_OFFSETS_TOPIC: offsetsTopic, OUTBOX_TAIL_TOPIC: topic },
    ...(variant ? { variant } : {}),
  });
  try {
    await relay.waitForLog(isStreaming, 60_000);
    const [{ id }] = (await query<{ id: string }>(
      bed.db.url,
      `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ('order', 'k1', 'E', '{}') returning id::text`,
    )) as [{ id: string }];
    // Behind an open transaction of the predecessor the row is not visible read_committed: wait a bounded time only,
    // shorter than the 10 s after which an idle relay writes a keepalive watermark (on its next lane, which the
    // negative control would fence then).
    await collector.waitUntil((c) => c.distinctIds().has(id), 6_000, `row ${id}`).catch(() => undefined);
    const rowVisibleBeforeCommit = collector.distinctIds().has(id);
    const commit = await txn.commit().then(
      () => 'committed',
      (error: { type?: string; message: string }) => `failed ${error.type ?? error.message}`,
    );
    await collector.waitUntil((c) => c.distinctIds().has(id), 30_000, `row ${id}`);
    // A record the predecessor committed would arrive right after the row; give it the time.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const predecessorRecords = collector.records.filter((r) => r.key === 'predecessor').length;
    return { commit, rowVisibleBeforeCommit, predecessorRecords, rows: collector.distinctIds().size };
  } finally {
    await predecessor.disconnect().catch(() => undefined);
    await relay.kill('SIGTERM');
  }
}

describe('exactly-once lanes', () => {
  it("fences the second lane at start: a predecessor's open Kafka transaction on <id>.2 is aborted and can no longer commit", async () => {
    const r = await predecessorOnSecondLane();
    expect(r.commit).toMatch(/^failed (INVALID_PRODUCER_EPOCH|PRODUCER_FENCED|INVALID_TXN_STATE)/);
    expect(r.predecessorRecords).toBe(0);
    // Aborted at the start, the predecessor's transaction no longer held the partition back.
    expect(r.rowVisibleBeforeCommit).toBe(true);
    expect(r.rows).toBe(1);
  });

  it('negative control: lanes fenced only when their turn comes let the predecessor commit behind the new relay', async () => {
    const r = await predecessorOnSecondLane('lanes-fenced-lazily');
    expect(r.commit).toBe('committed');
    expect(r.predecessorRecords).toBe(1);
    expect(r.rowVisibleBeforeCommit).toBe(false);
  });
});
