import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { Lsn } from '../../src/shared/lsn.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { confirmedFlushLsn, createSlot, currentWalLsn, query } from '../support/slot.js';

// This file freezes the broker (SIGSTOP), so it runs on a stack of its own.
let stack: StackHandle;
let db: TestDatabase;
const relays: RelayProcess[] = [];
const collectors: KafkaCollector[] = [];

beforeAll(async () => {
  stack = await startStack();
  db = await createTestDatabase(stack);
});
afterEach(async () => {
  const pid = stack.kafka.pid();
  if (pid) process.kill(pid, 'SIGCONT');
  await Promise.all(relays.splice(0).map((r) => r.kill('SIGKILL')));
  await Promise.all(collectors.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  await db?.drop();
  await stack?.stop();
});

/**
 * Freezes the broker while a transaction is in the slot, and returns whether
 * the slot's confirmed_flush_lsn passed that transaction's commit before
 * Kafka could acknowledge it; then thaws the broker and checks delivery.
 */
async function confirmWhileBrokerFrozen(variant: RelayVariant): Promise<{ confirmedPastUnacked: boolean; deliveredAfterThaw: boolean }> {
  const type = uniqueName('frozen');
  const topic = `outbox.event.${type}`;
  const slot = uniqueName('slot');
  await createSlot(db.url, slot);
  const collector = await new KafkaCollector(stack.brokers).start([topic]);
  collectors.push(collector);
  const relay = startRelay({ databaseUrl: db.url, brokers: stack.brokers, slot, variant });
  relays.push(relay);
  await relay.waitForLog(isStreaming);
  // Warm up: producer connected, topic metadata known.
  await query(db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'warm', 'E', '{}')`, [type]);
  await collector.waitForDistinct(1);
  const pid = stack.kafka.pid()!;
  process.kill(pid, 'SIGSTOP');
  const beforeCommit = await currentWalLsn(db.url);
  await query(db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'unacked', 'E', '{}')`, [type]);
  // Status updates go out every 100 ms: a wrong confirm shows up well within this.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const confirmed = await confirmedFlushLsn(db.url, slot);
  process.kill(pid, 'SIGCONT');
  let deliveredAfterThaw = true;
  await collector.waitForDistinct(2, 60_000).catch(() => (deliveredAfterThaw = false));
  // Relays read the same outbox table: stop this one before the next scenario.
  await relay.kill('SIGKILL');
  // Measured against the transaction's own Commit record (its commit_lsn header): PostgreSQL skips on replay a
  // transaction whose Commit starts below the confirmed LSN. Background WAL (running_xacts, checkpoints) may land
  // between beforeCommit and the insert, and an idle relay rightly confirms a keepalive over it.
  const unacked = collector.records.find((r) => r.key === 'unacked');
  const commitLsn = unacked?.headers.commit_lsn === undefined ? beforeCommit : Lsn.parse(unacked.headers.commit_lsn);
  return { confirmedPastUnacked: confirmed > commitLsn, deliveredAfterThaw };
}

describe('broker that cannot acknowledge', () => {
  it('does not confirm an LSN before Kafka acked (and this check catches a relay that confirms on receipt)', async () => {
    expect(await confirmWhileBrokerFrozen('correct')).toEqual({ confirmedPastUnacked: false, deliveredAfterThaw: true });
    const broken = await confirmWhileBrokerFrozen('confirm-on-receipt');
    expect(broken.confirmedPastUnacked).toBe(true);
  });
});
