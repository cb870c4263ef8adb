/**
 * Issue 43 (work in progress): the crash test with the relay decoding on a PostgreSQL 16 hot standby. Orders and
 * the outbox are written on the primary; the relay's slot is on the standby; the relay and the consumer are killed
 * again and again; the recount runs on the primary and in Kafka, and the standby's slot must be confirmed up to the
 * primary's last WAL position.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import { NativePostgres } from '../../dev/stack/native-postgres.js';
import { withDatabase } from '../support/database.js';
import { query } from '../support/slot.js';
import { formatResult, runCrash, type CrashOptions } from '../crash/crash-harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let stack: StackHandle;
let standby: NativePostgres;

/** A logical slot on the standby: creating it waits for a running-xacts record, which the primary is asked to log. */
async function createStandbySlot(standbyUrl: string, primaryUrl: string, slot: string): Promise<void> {
  const nudge = setInterval(() => void query(primaryUrl, 'select pg_log_standby_snapshot()').catch(() => undefined), 300);
  try {
    await query(standbyUrl, "select pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  } finally {
    clearInterval(nudge);
  }
}

/** The database exists on the standby once it replayed its creation. */
function onStandby(database: string): string {
  return withDatabase(standby.url, database);
}

const run = async (options: Omit<CrashOptions, 'stack' | 'log' | 'standby'>) => {
  const result = await runCrash({
    stack,
    log: (line) => console.log(line),
    ...options,
    standby: {
      urlFor: onStandby,
      createSlot: async (standbyUrl, primaryUrl, slot) => {
        // CREATE DATABASE on the primary reaches the standby by replay: wait until it can be connected to.
        for (let i = 0; ; i++) {
          try {
            await query(standbyUrl, 'select 1');
            break;
          } catch (error) {
            if (i > 100) throw error;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        await createStandbySlot(standbyUrl, primaryUrl, slot);
      },
    },
  });
  console.log(formatResult(result));
  return result;
};

beforeAll(async () => {
  const binDir = execFileSync('bash', [`${ROOT}bin/setup-postgres16.sh`], { encoding: 'utf8' }).trim();
  stack = await startStack({ provider: 'native', postgresBinDir: binDir, log: (l) => console.log(`[stack] ${l}`) });
  standby = await NativePostgres.startStandby(stack.postgres as NativePostgres, {
    binDir,
    settings: { wal_level: 'logical', hot_standby_feedback: 'on' },
    readyTimeoutMs: 60_000,
    log: (l) => console.log(`[standby] ${l}`),
    physicalSlot: 'outbox_tail_standby',
  });
}, 180_000);

afterAll(async () => {
  await standby?.destroy();
  await stack?.stop();
});

describe('crash test on a hot standby: kill -9 again and again, then recount', () => {
  it('loses nothing, sends nothing rolled back, applies every order once, and confirms the standby slot to the end', async () => {
    const r = await run({ orders: 300, kills: 5, consumerKills: 2, seed: 43 });
    expect(r.relay_kills).toBe(5);
    expect({ lost: r.lost, phantoms: r.phantoms, order_violations: r.order_violations }).toEqual({ lost: 0, phantoms: 0, order_violations: 0 });
    expect([r.outbox, r.distinct_ids, r.shipments, r.processed]).toEqual([r.orders, r.orders, r.orders, r.orders]);
    expect(r.standby).toEqual({ slot_confirmed_to_end: true });
    expect(r.passed).toBe(true);
  });

  it('catches, on the standby too, a relay that confirms on receipt: it loses at least one order', async () => {
    // Records wait 2 s to be batched: every kill lands while some are received but unpublished (crash-controls, (2)).
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 13,
      consumerMode: 'none',
      relayVariant: 'confirm-on-receipt',
      relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' },
    });
    expect(r.lost, 'loses at least one').toBeGreaterThan(0);
    expect(r.passed).toBe(false);
  });

  it('exactly-once: the same on the standby, read_committed', async () => {
    const r = await run({ orders: 200, kills: 4, consumerKills: 1, seed: 44, delivery: 'exactly-once' });
    expect({ lost: r.lost, phantoms: r.phantoms, duplicates: r.duplicates }).toEqual({ lost: 0, phantoms: 0, duplicates: 0 });
    expect(r.standby).toEqual({ slot_confirmed_to_end: true });
    expect(r.passed).toBe(true);
  });
});
