/**
 * Issue 43 (work in progress): the relay decodes on a PostgreSQL 16 hot standby. A native primary (with the stack's
 * Kafka) and a standby of it, both PostgreSQL 16 (bin/setup-postgres16.sh); orders are written on the primary, the
 * relay streams from a logical slot on the standby. A standby without hot_standby_feedback is refused with the fix.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import { NativePostgres } from '../../dev/stack/native-postgres.js';
import { freePort } from '../../dev/stack/process.js';
import { createTestDatabase, uniqueName, withDatabase, type TestDatabase } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { runCli } from '../support/run-cli.js';
import { query } from '../support/slot.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let stack: StackHandle;
let standby: NativePostgres;
let db: TestDatabase;
let standbyDbUrl = '';
const relays: RelayProcess[] = [];
const collectors: KafkaCollector[] = [];

/** A logical slot on the standby: creating it waits for a running-xacts record, which the primary is asked to log. */
async function createStandbySlot(slot: string): Promise<void> {
  const nudge = setInterval(() => void query(db.url, 'select pg_log_standby_snapshot()').catch(() => undefined), 300);
  try {
    await query(standbyDbUrl, "select pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  } finally {
    clearInterval(nudge);
  }
}

/** DDL and VACUUM of the catalogs on the primary until the standby reports the slot conflicting (invalidated). */
async function waitForInvalidation(slot: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const name = uniqueName('churn');
    // Two transactions: rows inserted and deleted by one transaction give a vacuum no conflict horizon.
    await query(db.url, `create table ${name} (a int)`);
    await query(db.url, `drop table ${name}`);
    await query(db.url, 'vacuum pg_class, pg_attribute, pg_type, pg_depend');
    const [row] = await query<{ conflicting: boolean | null }>(standbyDbUrl, 'select conflicting from pg_replication_slots where slot_name = $1', [slot]);
    if (row?.conflicting) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  const primarySlots = await query(db.url, 'select slot_name, xmin::text, catalog_xmin::text from pg_replication_slots');
  const holders = await query(db.url, 'select pid, backend_xmin::text, backend_xid::text, state, query from pg_stat_activity where backend_xmin is not null');
  const standbySlot = await query(standbyDbUrl, 'select slot_name, catalog_xmin::text, conflicting from pg_replication_slots');
  const feedback = await query(standbyDbUrl, "select current_setting('hot_standby_feedback') as f");
  throw new Error(
    `slot ${slot} was not invalidated within 60 rounds of catalog churn with hot_standby_feedback off: primary slots ${JSON.stringify(primarySlots)}, xmin holders ${JSON.stringify(holders)}, standby slots ${JSON.stringify(standbySlot)}, feedback ${JSON.stringify(feedback)}`,
  );
}

beforeAll(async () => {
  const binDir = execFileSync('bash', [`${ROOT}bin/setup-postgres16.sh`], { encoding: 'utf8' }).trim();
  stack = await startStack({ provider: 'native', postgresBinDir: binDir, log: (l) => console.log(`[stack] ${l}`) });
  db = await createTestDatabase(stack);
  standby = await NativePostgres.startStandby(stack.postgres as NativePostgres, {
    binDir,
    settings: { wal_level: 'logical', hot_standby_feedback: 'on' },
    readyTimeoutMs: 60_000,
    log: (l) => console.log(`[standby] ${l}`),
    physicalSlot: 'outbox_tail_standby',
  });
  standbyDbUrl = withDatabase(standby.url, db.name);
}, 180_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.kill('SIGKILL')));
  await Promise.all(collectors.map((c) => c.stop()));
  await standby?.destroy();
  // The promotion test killed the primary: its database goes with the stack's data directory.
  await db?.drop().catch(() => undefined);
  await stack?.stop();
});

describe('decoding on a PostgreSQL 16 hot standby', () => {
  it('relays what the primary commits from a slot on the standby', async () => {
    const slot = uniqueName('standby_slot');
    await createStandbySlot(slot);
    const type = uniqueName('sb');
    const collector = await new KafkaCollector(stack.brokers).start([`outbox.event.${type}`]);
    collectors.push(collector);
    const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    await query(
      db.url,
      `insert into outbox (aggregate_type, aggregate_id, event_type, payload) select $1, 'k' || g, 'E', jsonb_build_object('g', g) from generate_series(1, 20) g`,
      [type],
    );
    await collector.waitForDistinct(20);
    expect(relay.logs.some((l) => l.event === 'standby-decoding')).toBe(true);
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
    // The standby's slot was confirmed past what was relayed.
    const [row] = await query<{ confirmed: string }>(
      standbyDbUrl,
      'select confirmed_flush_lsn::text as confirmed from pg_replication_slots where slot_name = $1',
      [slot],
    );
    expect(row!.confirmed).not.toBeNull();
  }, 120_000);

  it('refuses a standby without hot_standby_feedback, naming the fix', async () => {
    await query(standby.url, 'alter system set hot_standby_feedback = off');
    await query(standby.url, 'select pg_reload_conf()');
    try {
      const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot: uniqueName('nofeedback') });
      relays.push(relay);
      const { code } = await relay.exited;
      expect(code).toBe(3);
      expect(relay.stderr()).toMatch(/STANDBY_NOT_READY_FOR_DECODING: .*hot_standby_feedback is off.*Fix: ALTER SYSTEM SET hot_standby_feedback = on/s);
    } finally {
      await query(standby.url, 'alter system reset hot_standby_feedback');
      await query(standby.url, 'select pg_reload_conf()');
    }
  }, 60_000);

  it('negative control: with hot_standby_feedback off, the primary vacuums catalog rows the slot needs; the running relay halts naming rows_removed, never recreating the slot', async () => {
    const slot = uniqueName('feedback_off_slot');
    await createStandbySlot(slot);
    const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    await query(standby.url, 'alter system set hot_standby_feedback = off');
    await query(standby.url, 'select pg_reload_conf()');
    try {
      // Catalog rows newer than the slot's catalog_xmin, deleted and vacuumed away on the primary; the standby's
      // replay of that vacuum conflicts with the slot.
      await waitForInvalidation(slot);
      const { code } = await relay.exited;
      expect(code, 'the relay halts').not.toBe(0);
      expect(relay.stderr()).toMatch(/SLOT_INVALIDATED.*catalog rows the slot needed were removed.*hot_standby_feedback = on/s);
      const [row] = await query<{ n: number }>(standbyDbUrl, 'select count(*)::int as n from pg_replication_slots where slot_name = $1 and not conflicting', [
        slot,
      ]);
      expect(row!.n, 'no usable slot of that name was recreated').toBe(0);
    } finally {
      await query(standby.url, 'alter system reset hot_standby_feedback');
      await query(standby.url, 'select pg_reload_conf()');
    }
  }, 120_000);

  it('init --slot on the standby with --primary-url creates the slot there; without --primary-url it refuses naming it', async () => {
    const slot = uniqueName('init_standby');
    const refused = await runCli(['init', '--slot', slot], { OUTBOX_TAIL_DATABASE_URL: standbyDbUrl });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/STANDBY_NEEDS_PRIMARY_URL: .* is a hot standby.*Fix: add --primary-url/s);
    const t0 = Date.now();
    const init = await runCli(['init', '--slot', slot], { OUTBOX_TAIL_DATABASE_URL: standbyDbUrl, OUTBOX_TAIL_PRIMARY_URL: db.url });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`slot ${slot} created`);
    console.log(`init --slot on the standby: ${Date.now() - t0} ms`);
    const [row] = await query<{ n: number }>(
      standbyDbUrl,
      "select count(*)::int as n from pg_replication_slots where slot_name = $1 and slot_type = 'logical'",
      [slot],
    );
    expect(row!.n).toBe(1);
    const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('run --create-slot on the standby asks the primary for a running-xacts record through --primary-url and relays from the new slot', async () => {
    const slot = uniqueName('create_on_standby');
    const type = uniqueName('cs');
    const collector = await new KafkaCollector(stack.brokers).start([`outbox.event.${type}`]);
    collectors.push(collector);
    const t0 = Date.now();
    const relay = startRelay({
      databaseUrl: standbyDbUrl,
      brokers: stack.brokers,
      slot,
      env: { OUTBOX_TAIL_CREATE_SLOT: 'true', OUTBOX_TAIL_PRIMARY_URL: db.url },
    });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    console.log(`run --create-slot on the standby: streaming after ${Date.now() - t0} ms`);
    expect(relay.logs.some((l) => l.event === 'slot-created')).toBe(true);
    expect(
      relay.logs.some((l) => l.event === 'standby-slot-creation-waits'),
      'no waiting warning with --primary-url',
    ).toBe(false);
    const [row] = await query<{ n: number }>(
      standbyDbUrl,
      "select count(*)::int as n from pg_replication_slots where slot_name = $1 and slot_type = 'logical'",
      [slot],
    );
    expect(row!.n, 'the slot is on the standby').toBe(1);
    await query(db.url, `insert into outbox (aggregate_type, aggregate_id, event_type, payload) select $1, 'k' || g, 'E', '{}' from generate_series(1, 10) g`, [
      type,
    ]);
    await collector.waitForDistinct(10);
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('with --primary-url the heartbeat writes on the primary: an idle standby slot keeps being confirmed; without it the heartbeat fails on the standby', async () => {
    const confirmed = async (slot: string) =>
      (await query<{ lsn: string }>(standbyDbUrl, 'select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [slot]))[0]!.lsn;
    const heartbeat = { OUTBOX_TAIL_HEARTBEAT_INTERVAL_MS: '300', OUTBOX_TAIL_LOG_LEVEL: 'debug' };
    const slot = uniqueName('heartbeat_slot');
    await createStandbySlot(slot);
    const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot, env: { ...heartbeat, OUTBOX_TAIL_PRIMARY_URL: db.url } });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    const before = await confirmed(slot);
    await relay.waitForLog((l) => l.event === 'heartbeat', 20_000);
    let after = before;
    for (let i = 0; i < 100 && after === before; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await confirmed(slot);
    }
    expect(after, 'confirmed moved with the heartbeats alone').not.toBe(before);
    expect(relay.logs.filter((l) => l.event === 'heartbeat-failed')).toEqual([]);
    expect(
      relay.logs.filter((l) => l.event === 'standby-heartbeat-needs-primary'),
      'no warning with --primary-url',
    ).toEqual([]);
    relay.child.kill('SIGTERM');
    await relay.exited;

    const without = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot, env: heartbeat });
    relays.push(without);
    await without.waitForLog(isStreaming, 60_000);
    const failed = await without.waitForLog((l) => l.event === 'heartbeat-failed', 20_000);
    expect(String(failed.err)).toMatch(/recovery/i);
    // ... which preflight said before streaming, with the fix.
    const warned = without.logs.find((l) => l.event === 'standby-heartbeat-needs-primary');
    expect(String(warned?.msg)).toMatch(/give --primary-url/);
    without.child.kill('SIGTERM');
    await without.exited;
  }, 90_000);

  it('status and /metrics say the slot is on a hot standby and show its replay lag; the slot poller works there', async () => {
    const slot = uniqueName('status_slot');
    await createStandbySlot(slot);
    const port = await freePort();
    const relay = startRelay({
      databaseUrl: standbyDbUrl,
      brokers: stack.brokers,
      slot,
      env: { OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}`, OUTBOX_TAIL_SLOT_POLL_INTERVAL_MS: '200' },
    });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    const status = await runCli(['status', '--slot', slot, '--json'], { OUTBOX_TAIL_DATABASE_URL: standbyDbUrl });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ exists: true, active: true, standby: { replayLagBytes: expect.any(Number) } });
    const text = await runCli(['status', '--slot', slot], { OUTBOX_TAIL_DATABASE_URL: standbyDbUrl });
    expect(text.stdout).toMatch(/standby +decoding on a hot standby; replay lag \d+ bytes/);
    let metrics = '';
    for (let i = 0; i < 50 && !/^outbox_tail_standby_replay_lag_bytes \d+/m.test(metrics); i++) {
      await new Promise((r) => setTimeout(r, 200));
      metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    }
    expect(metrics).toMatch(/^outbox_tail_standby_replay_lag_bytes \d+/m);
    expect(metrics).toMatch(/^outbox_tail_slot_poll_errors_total 0$/m);
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it("doctor on the standby reports what decoding there depends on, with the primary's wal_level through --primary-url", async () => {
    const slot = uniqueName('doctor_slot');
    await createStandbySlot(slot);
    const doctor = async (env: Record<string, string>) => {
      const run = await runCli(['doctor', '--json', '--slot', slot, '--wal-sample', '1s'], {
        OUTBOX_TAIL_DATABASE_URL: standbyDbUrl,
        OUTBOX_TAIL_BROKERS: stack.brokers.join(','),
        ...env,
      });
      expect(run.stdout, run.stderr).toMatch(/^\{/);
      return (JSON.parse(run.stdout) as { checks: { check: string; status: string; found: string }[] }).checks;
    };
    const withPrimary = await doctor({ OUTBOX_TAIL_PRIMARY_URL: db.url });
    expect(withPrimary.find((c) => c.check === 'postgres standby decoding')).toMatchObject({
      status: 'ok',
      found: expect.stringMatching(
        /^hot standby, hot_standby_feedback on, physical slot outbox_tail_standby, WAL receiver streaming, replay lag \d+ bytes, the primary's wal_level logical$/,
      ),
    });
    expect(
      withPrimary.find((c) => c.check === 'postgres primary'),
      'no longer "point it at the primary"',
    ).toBeUndefined();
    const without = await doctor({});
    expect(without.find((c) => c.check === 'postgres standby decoding')).toMatchObject({ status: 'ok', found: expect.stringContaining('give --primary-url') });
  }, 60_000);

  // Last: it kills the primary.
  it('carries on after the standby is promoted (the primary killed with SIGKILL): every row the promoted server has is in Kafka', async () => {
    const slot = uniqueName('promoted_slot');
    await createStandbySlot(slot);
    const type = uniqueName('promo');
    const collector = await new KafkaCollector(stack.brokers).start([`outbox.event.${type}`]);
    collectors.push(collector);
    const relay = startRelay({ databaseUrl: standbyDbUrl, brokers: stack.brokers, slot });
    relays.push(relay);
    await relay.waitForLog(isStreaming, 60_000);
    const insert = (url: string, from: number, to: number) =>
      query(
        url,
        `insert into outbox (aggregate_type, aggregate_id, event_type, payload) select $1, 'k' || g, 'E', jsonb_build_object('g', g) from generate_series($2::int, $3::int) g`,
        [type, from, to],
      );
    for (let i = 0; i < 10; i++) await insert(db.url, i * 10 + 1, i * 10 + 10);
    await collector.waitForDistinct(50);
    await (stack.postgres as NativePostgres).kill('SIGKILL');
    await query(standby.url, 'select pg_promote(true, 60)');
    // The promoted server takes the writes now; the relay's URL already points at it.
    await insert(standbyDbUrl, 101, 150);
    const ids = (await query<{ id: string }>(standbyDbUrl, 'select id::text from outbox where aggregate_type = $1', [type])).map((r) => r.id);
    expect(ids.length, "rows the promoted server has (the primary's last ones may not have reached it)").toBeGreaterThanOrEqual(100);
    await collector.waitUntil((c) => ids.every((id) => c.distinctIds().has(id)), 60_000, 'every row of the promoted server');
    expect(
      ids.filter((id) => !collector.distinctIds().has(id)),
      'lost',
    ).toEqual([]);
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  }, 180_000);
});
