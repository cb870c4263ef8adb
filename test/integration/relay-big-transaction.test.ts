/**
 * I11 for one large transaction: the relay publishes its rows while the transaction is still
 * arriving and keeps at most its in-flight limits of them, so its live memory does not grow with the
 * transaction. Proven on the heap, not on RSS: the relay runs with its V8 heap capped (RELAY_HEAP_MB,
 * the fault suite's cap) and must deliver every row; the negative control, a relay whose in-flight
 * limits do not hold (set past the transaction's size, with small batches so that decoding outruns
 * publishing), must die of "heap out of memory" under the same cap. RSS is logged, not asserted: it
 * moves with how busy the machine is (GC threads starved of CPU), the live heap does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { RELAY_HEAP_MB } from '../support/relay-memory.js';
import { isStreaming, startRelay } from '../support/relay-process.js';
import { createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';
import { getStack } from '../support/stack.js';

const stack = getStack();
let db: TestDatabase;
const ROWS = 200_000;

beforeAll(async () => {
  db = await createTestDatabase(stack);
});
afterAll(async () => {
  await db?.drop();
});

async function bigTransaction(relayEnv: Record<string, string>) {
  const type = uniqueName('bulk');
  const topic = `outbox.event.${type}`;
  const slot = uniqueName('slot');
  await createSlot(db.url, slot);
  const collector = await new KafkaCollector(stack.brokers).start([topic]);
  const relay = startRelay({
    databaseUrl: db.url,
    brokers: stack.brokers,
    slot,
    env: { NODE_OPTIONS: `--max-old-space-size=${RELAY_HEAP_MB}`, ...relayEnv },
  });
  try {
    await relay.waitForLog(isStreaming);
    const idle = relay.peakRssMb();
    await query(
      db.url,
      `insert into outbox(aggregate_type, aggregate_id, event_type, payload)
       select $1, 'k' || (g % 100), 'Bulk', jsonb_build_object('n', g, 'pad', repeat('p', 280)) from generate_series(1, ${ROWS}) g`,
      [type],
    );
    const end = await currentWalLsn(db.url);
    const outcome = await Promise.race([
      collector.waitForDistinct(ROWS, 240_000).then(() => waitForConfirmed(db.url, slot, end, 60_000).then(() => 'delivered' as const)),
      relay.exited.then(() => 'exited' as const),
    ]);
    const result = { outcome, records: collector.records.length, stderr: relay.stderr(), peak: relay.peakRssMb(), idle };
    console.log(
      `${ROWS}-row transaction, heap capped at ${RELAY_HEAP_MB} MB: ${outcome}, ${result.records} records, relay peak RSS ${result.peak.toFixed(0)} MB (idle ${idle.toFixed(0)} MB)`,
    );
    return result;
  } finally {
    await relay.kill();
    await collector.stop();
  }
}

describe('large transactions', () => {
  it(`relays a ${ROWS.toLocaleString('en')}-row transaction within a ${RELAY_HEAP_MB} MB heap: it never holds the transaction, only its in-flight limits`, async () => {
    const r = await bigTransaction({ OUTBOX_TAIL_MAX_IN_FLIGHT_MESSAGES: '5000' });
    expect(r.stderr).not.toMatch(/heap out of memory/);
    expect(r.outcome).toBe('delivered');
    expect(r.records).toBe(ROWS);
  });

  it('negative control: a relay whose in-flight limits do not hold runs out of that heap on the same transaction', async () => {
    const r = await bigTransaction({
      OUTBOX_TAIL_MAX_IN_FLIGHT_MESSAGES: '100000000',
      OUTBOX_TAIL_MAX_IN_FLIGHT_BYTES: '100000000000',
      OUTBOX_TAIL_BATCH_MAX_MESSAGES: '50',
    });
    expect(r.outcome).toBe('exited');
    expect(r.stderr).toMatch(/heap out of memory/);
    expect(r.records).toBeLessThan(ROWS);
  });
});
