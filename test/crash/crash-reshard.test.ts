import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { createShardSet } from '../../src/commands/init/init-shards.js';
import { reshard, type ReshardReport } from '../../src/commands/reshard/reshard.js';
import { naiveReshard } from '../support/broken-reshard.js';
import { createTestDatabase, uniqueName } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { getStack } from '../support/stack.js';
import { countOrderViolations } from './crash-harness.js';

const stack = getStack();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ReshardRun {
  committed: number;
  lost: number;
  duplicates: number;
  orderViolations: number;
  oldSlotsLeft: number;
  report: ReshardReport | null;
}

/** 2 -> 4 shards under a steady writer (keys shared by many events); `kill`: one old relay is SIGKILLed mid-procedure and restarted. */
async function runReshard(procedure: 'reshard' | 'naive'): Promise<ReshardRun> {
  const db = await createTestDatabase(stack);
  const run = uniqueName('reshard');
  const [oldSlot, newSlot, oldPub, newPub] = [run, `${run}_v2`, `${run}_p`, `${run}_p_v2`];
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const collector = await new KafkaCollector(stack.brokers).start([`${run}.order`]);
  const relays: RelayProcess[] = [];
  const committed: string[] = [];
  let writing = true;
  let writer: Promise<void> = Promise.resolve();
  const relay = (slot: string, publication: string, shard: string) => {
    const r = startRelay({
      databaseUrl: db.url,
      brokers: stack.brokers,
      slot,
      env: { OUTBOX_TAIL_TOPIC: `${run}.{aggregate_type}`, OUTBOX_TAIL_PUBLICATION: publication, OUTBOX_TAIL_SHARD: shard },
    });
    relays.push(r);
    return r;
  };
  try {
    const set = { table: 'public.outbox', columnAggregateId: 'aggregate_id', where: 'test' };
    await createShardSet(admin, { ...set, publication: oldPub, slot: oldSlot, count: 2 });
    const old = [relay(oldSlot, oldPub, '0/2'), relay(oldSlot, oldPub, '1/2')];
    await Promise.all(old.map((r) => r.waitForLog(isStreaming)));

    // The steady writer: ~100 transactions/s on 40 keys, each event's id kept once it committed.
    writer = (async () => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        for (let n = 0; writing; n++) {
          await client.query('begin');
          const id = await writeOutboxEvent(client, { aggregateType: 'order', aggregateId: String(n % 40), eventType: 'OrderUpdated', payload: { n } });
          await client.query('commit');
          committed.push(id);
          await sleep(10);
        }
      } finally {
        await client.end().catch(() => undefined);
      }
    })();
    await sleep(1_500);

    let report: ReshardReport | null = null;
    const startNew = async () => {
      const fresh = [0, 1, 2, 3].map((i) => relay(newSlot, newPub, `${i}/4`));
      await Promise.all(fresh.map((r) => r.waitForLog(isStreaming)));
    };
    const stopOld = async () => {
      await Promise.all(old.map((r) => r.kill('SIGTERM')));
    };
    if (procedure === 'reshard') {
      let actions: Promise<void> = Promise.resolve();
      report = await reshard(
        admin,
        {
          ...set,
          slot: oldSlot,
          publication: oldPub,
          source: 'table',
          delivery: 'at-least-once',
          from: 2,
          to: 4,
          toSlot: newSlot,
          toPublication: newPub,
          stepTimeoutMs: 60_000,
        },
        (step) => {
          // One after the other, as an operator acts: stopping the old relays waits for the restarted one, which
          // would otherwise come back after the stop and hold its slot when reshard drops it.
          if (step.step === 'created') {
            // The kill in the middle of the procedure: an old relay dies before its slot passed the consistent point, and restarts.
            actions = actions.then(async () => {
              await old[0]!.kill('SIGKILL');
              old[0] = relay(oldSlot, oldPub, '0/2');
              await old[0].waitForLog(isStreaming);
            });
          }
          if (step.step === 'stop-old-start-new') actions = actions.then(stopOld).then(startNew);
        },
      );
      await actions;
    } else {
      await naiveReshard(admin, { table: 'public.outbox', toSlot: newSlot, toPublication: newPub, to: 4 }, { stopOld, startNew });
    }
    await sleep(1_500);
    writing = false;
    await writer;
    await collector.waitUntil((c) => committed.every((id) => c.distinctIds().has(id)), 20_000, 'every committed id').catch(() => undefined);
    const ids = collector.distinctIds();
    const oldSlotsLeft = (await admin.query('select 1 from pg_replication_slots where slot_name = any($1)', [[`${oldSlot}_0`, `${oldSlot}_1`]])).rowCount ?? -1;
    return {
      committed: committed.length,
      lost: committed.filter((id) => !ids.has(id)).length,
      duplicates: collector.records.length - ids.size,
      orderViolations: countOrderViolations(collector.records),
      oldSlotsLeft,
      report,
    };
  } finally {
    // Stopped before the database is dropped WITH (FORCE), which would end its session under a running query.
    writing = false;
    await writer.catch(() => undefined);
    await Promise.all(relays.map((r) => r.kill('SIGKILL')));
    await collector.stop();
    await admin.end().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

describe('reshard 2 -> 4 under a steady writer', () => {
  it('loses nothing and keeps per-key order across a kill in the middle; the overlap is republished and bounded; the old slots are dropped', async () => {
    const r = await runReshard('reshard');
    console.log(JSON.stringify(r));
    expect(r.committed).toBeGreaterThan(100);
    expect({ lost: r.lost, orderViolations: r.orderViolations }).toEqual({ lost: 0, orderViolations: 0 });
    expect(r.report!.overlapBytes).toBeGreaterThanOrEqual(0);
    expect(r.report!.dropped).toHaveLength(4);
    expect(r.oldSlotsLeft).toBe(0);
  });

  it('negative control: stopping the old relays before creating the new shard set loses at least one event', async () => {
    const r = await runReshard('naive');
    console.log(JSON.stringify(r));
    expect(r.lost).toBeGreaterThan(0);
  });
});
