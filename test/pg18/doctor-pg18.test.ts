/**
 * PostgreSQL 18 on a server of this file's own (relayTestbed ownStack: one PG 18 container and one Kafka for
 * every test here, through `OUTBOX_TAIL_PG_MAJOR=18 bin/with-engine.sh npx vitest run --project pg18`): the
 * settings tested here act on every slot of a server, so they are never changed on the run's shared one.
 *
 * - idle_replication_slot_timeout: a slot left idle is invalidated at a checkpoint (cause idle_timeout); the relay
 *   exits 4 naming the cause and the setting, `status` shows both, doctor fails the slot and the setting with their
 *   fixes, and `--on-slot-lost recover` rebuilds the slot and re-publishes from the table with nothing lost.
 * - synchronized_standby_slots naming a missing or inactive physical slot, and an unbounded
 *   max_slot_wal_keep_size: doctor reports each, and the printed fix makes the check pass.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/commands/doctor/doctor-checks.js';
import type { DoctorReport } from '../../src/commands/doctor/run-doctor.js';
import type { SlotStatus } from '../../src/postgres/slots/slot-status.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli } from '../support/run-cli.js';
import { query } from '../support/slot.js';

const bed = relayTestbed({ ownStack: 'test/pg18/doctor-pg18.test.ts' });

const env = () => ({ OUTBOX_TAIL_DATABASE_URL: bed.db.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });

async function doctor(slot: string, args: string[] = []): Promise<DoctorReport> {
  const run = await runCli(['doctor', '--slot', slot, '--wal-sample', '0.2s', '--json', ...args], env());
  try {
    return JSON.parse(run.stdout) as DoctorReport;
  } catch {
    throw new Error(`doctor printed no JSON (exit ${run.code}): ${run.stdout} ${run.stderr}`);
  }
}

function check(report: DoctorReport, name: string): CheckResult {
  const found = report.checks.find((c) => c.check === name);
  if (!found) throw new Error(`no check ${name} in ${JSON.stringify(report.checks)}`);
  return found;
}

/** A printed SQL fix as it is printed (up to the first "   (" remark), one statement at a time. */
async function applySql(fix: string | null): Promise<void> {
  expect(fix).not.toBeNull();
  for (const statement of fix!
    .split('   (')[0]!
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean))
    await query(bed.db.url, statement);
}

/** pg_reload_conf() is asynchronous: wait until a new session sees the value. */
async function waitForSetting(name: string, value: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await query<{ v: string }>(bed.db.url, 'select current_setting($1) as v', [name]))[0]!.v !== value) {
    if (Date.now() > deadline) throw new Error(`${name} is not ${value} after 30 s`);
    await sleep(100);
  }
}

async function insertEvents(aggregate: string, from: number, count: number): Promise<string[]> {
  const rows = await query<{ id: string }>(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload) select $1, 'k-' || g, 'Created', '{}' from generate_series($2::int, $3::int) g returning id::text`,
    [aggregate, from, from + count - 1],
  );
  return rows.map((r) => r.id);
}

beforeAll(async () => {
  const [row] = await query<{ num: string }>(bed.db.url, `select current_setting('server_version_num') as num`);
  if (Number(row!.num) < 180000) {
    throw new Error(`test/pg18 needs PostgreSQL 18 (this stack runs server_version_num ${row!.num}): run it with OUTBOX_TAIL_PG_MAJOR=18 bin/with-engine.sh`);
  }
});

afterAll(async () => {
  for (const name of ['idle_replication_slot_timeout', 'synchronized_standby_slots', 'max_slot_wal_keep_size']) {
    await query(bed.db.url, `alter system reset ${name}`).catch(() => undefined);
  }
  await query(bed.db.url, 'select pg_reload_conf()').catch(() => undefined);
});

describe('PostgreSQL 18: slot invalidation causes and doctor', () => {
  it('a slot invalidated by idle_replication_slot_timeout is reported with cause idle_timeout and its fix by the relay, status and doctor; --on-slot-lost recover rebuilds it with nothing lost', async () => {
    const slot = uniqueName('idle');
    const aggregate = uniqueName('idle');
    const init = await runCli(['init', '--slot', slot], env());
    expect(init.code, init.stderr).toBe(0);
    const collector = await bed.collect([`outbox.event.${aggregate}`]);
    // The relay delivers the first rows and records its position (what recover backfills from), then stops.
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming, 60_000);
    const before = await insertEvents(aggregate, 1, 50);
    await collector.waitForDistinct(50, 60_000);
    const deadline = Date.now() + 30_000;
    while ((await query(bed.db.url, 'select 1 from outbox_tail_relay_position where slot = $1', [slot])).length === 0) {
      if (Date.now() > deadline) throw new Error('the relay recorded no position in 30 s');
      await sleep(200);
    }
    await relay.kill('SIGTERM');
    // Committed while no relay runs: in the slot only, until it is invalidated.
    const during = await insertEvents(aggregate, 51, 50);

    await query(bed.db.url, `alter system set idle_replication_slot_timeout = '1min'`);
    await query(bed.db.url, 'select pg_reload_conf()');
    await waitForSetting('idle_replication_slot_timeout', '1min');
    const idleCheck = check(await doctor(slot), 'idle_replication_slot_timeout');
    expect(idleCheck.status).toBe('fail');
    expect(idleCheck.found).toMatch(/^1m: .*\(cause idle_timeout\), shorter than --max-downtime 1h/);

    // The invalidation happens at a checkpoint once the slot was inactive for the timeout (1 min, PG 18's minimum).
    const t0 = Date.now();
    for (;;) {
      await query(bed.db.url, 'checkpoint');
      const [s] = await query<{ reason: string | null }>(bed.db.url, 'select invalidation_reason as reason from pg_replication_slots where slot_name = $1', [
        slot,
      ]);
      if (s?.reason) {
        expect(s.reason).toBe('idle_timeout');
        break;
      }
      if (Date.now() - t0 > 180_000) throw new Error('the idle slot was not invalidated within 3 min');
      await sleep(2_000);
    }
    console.log(`slot ${slot} invalidated (idle_timeout) ${((Date.now() - t0) / 1000).toFixed(0)} s after the timeout was set`);

    const status = await runCli(['status', '--slot', slot], env());
    expect(status.stdout).toMatch(/^wal_status +lost$/m);
    expect(status.stdout).toMatch(/^invalidated +cause idle_timeout: the slot stayed inactive .*idle_replication_slot_timeout/m);
    expect(status.stdout).toMatch(/^fix +raise idle_replication_slot_timeout .*\(ALTER SYSTEM SET idle_replication_slot_timeout = 0;/m);
    const json = JSON.parse((await runCli(['status', '--slot', slot, '--json'], env())).stdout) as SlotStatus;
    expect(json).toMatchObject({
      walStatus: 'lost',
      invalidationReason: 'idle_timeout',
      invalidation: { reason: 'idle_timeout', source: 'invalidation_reason' },
    });

    // The relay (--on-slot-lost halt, the default) exits 4 naming the cause and the setting.
    const halted = bed.relay(slot);
    const exit = await halted.exited;
    expect(exit.code, halted.stderr()).toBe(4);
    expect(halted.stderr()).toMatch(/SLOT_INVALIDATED/);
    expect(halted.stderr()).toMatch(/invalidation_reason = idle_timeout/);
    expect(halted.stderr()).toMatch(/ALTER SYSTEM SET idle_replication_slot_timeout = 0/);

    const report = await doctor(slot);
    expect(check(report, 'replication slot')).toMatchObject({
      status: 'fail',
      found: expect.stringMatching(/is invalidated, cause idle_timeout \(invalidation_reason\)/),
    });
    await applySql(check(report, 'idle_replication_slot_timeout').fix);
    await waitForSetting('idle_replication_slot_timeout', '0');
    expect(check(await doctor(slot), 'idle_replication_slot_timeout').status).toBe('ok');

    // Only the rows before the stop reached Kafka: those committed while the slot sat idle exist in the table only now.
    expect(during.filter((id) => collector.distinctIds().has(id))).toEqual([]);
    // --on-slot-lost recover: a new slot, and the rows since the recorded position re-published from the table.
    const recovering = bed.relay(slot, { env: { OUTBOX_TAIL_ON_SLOT_LOST: 'recover' } });
    const lost = await recovering.waitForLog((l) => l.event === 'slot-lost', 60_000);
    expect(String(lost.err)).toMatch(/idle_timeout/);
    await recovering.waitForLog((l) => l.event === 'slot-recovered', 60_000);
    await recovering.waitForLog(isStreaming, 60_000);
    const after = await insertEvents(aggregate, 101, 50);
    const expected = [...before, ...during, ...after];
    await collector.waitUntil((c) => expected.every((id) => c.distinctIds().has(id)), 60_000, 'every committed id');
    const missing = expected.filter((id) => !collector.distinctIds().has(id));
    expect(missing, 'ids committed but never delivered').toEqual([]);
    expect(check(await doctor(slot), 'replication slot').status).toBe('ok');
  });

  it('doctor fails synchronized_standby_slots naming a missing or an inactive physical slot; the printed setting makes it pass', async () => {
    const slot = uniqueName('sss');
    expect((await runCli(['init', '--slot', slot], env())).code).toBe(0);
    const standbySlot = uniqueName('standby');
    // An inactive physical slot: no standby streams from it.
    await query(bed.db.url, 'select pg_create_physical_replication_slot($1)', [standbySlot]);
    await query(bed.db.url, `alter system set synchronized_standby_slots = '${standbySlot}'`);
    await query(bed.db.url, 'select pg_reload_conf()');
    await waitForSetting('synchronized_standby_slots', standbySlot);
    let sss = check(await doctor(slot), 'synchronized_standby_slots');
    expect(sss).toMatchObject({ status: 'fail', found: expect.stringContaining(`${standbySlot} is inactive (no standby streams from it)`) });
    // Missing: the standby's slot dropped while the setting still names it (a promoted standby inherits such a setting).
    await query(bed.db.url, 'select pg_drop_replication_slot($1)', [standbySlot]);
    sss = check(await doctor(slot), 'synchronized_standby_slots');
    expect(sss).toMatchObject({ status: 'fail', found: expect.stringContaining(`${standbySlot} does not exist`) });
    expect(sss.fix).toContain(`ALTER SYSTEM SET synchronized_standby_slots = ''; SELECT pg_reload_conf()`);
    await applySql(sss.fix!.replace(/^.*?, or /, ''));
    await waitForSetting('synchronized_standby_slots', '');
    expect(check(await doctor(slot), 'synchronized_standby_slots').status).toBe('ok');
  });

  it('doctor warns on an unbounded max_slot_wal_keep_size; the printed setting makes it pass', async () => {
    const slot = uniqueName('keep');
    expect((await runCli(['init', '--slot', slot], env())).code).toBe(0);
    await query(bed.db.url, `alter system set max_slot_wal_keep_size = -1`);
    await query(bed.db.url, 'select pg_reload_conf()');
    await waitForSetting('max_slot_wal_keep_size', '-1');
    const keep = check(await doctor(slot, ['--max-downtime', '5m']), 'max_slot_wal_keep_size');
    expect(keep).toMatchObject({ status: 'warn', found: expect.stringMatching(/^-1 \(unbounded\)/) });
    await applySql(keep.fix);
    const size = /'(\d+GB)'/.exec(keep.fix!)![1]!;
    await waitForSetting('max_slot_wal_keep_size', size);
    expect(check(await doctor(slot, ['--max-downtime', '5m']), 'max_slot_wal_keep_size').status).toBe('ok');
  });
});
