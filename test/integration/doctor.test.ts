/**
 * `outbox-tail doctor` against the real PostgreSQL and Kafka of the run, set up
 * right (as `npm run demo` sets it up, with the relay as a least-privilege role)
 * and then wrong on purpose, one thing at a time: each wrong setup is reported
 * by its check with a fix, and applying the printed fix makes the check pass.
 * Settings of the whole server (wal_level, max_slot_wal_keep_size,
 * idle_replication_slot_timeout, synchronized_standby_slots) are changed only on
 * the PostgreSQL 18 server of test/pg18/doctor-pg18.test.ts, never on the shared one.
 */
import kafkajs, { type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/commands/doctor/doctor-checks.js';
import type { DoctorReport } from '../../src/commands/doctor/run-doctor.js';
import { findPostgresBinDir, NativePostgres } from '../../dev/stack/native-postgres.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor } from '../support/kafka.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { query } from '../support/slot.js';

const { ConfigResourceTypes } = kafkajs;
const bed = relayTestbed();

const slot = uniqueName('doctor');
const role = uniqueName('doctor_role');
const prefix = uniqueName('doctor');
const topic = `${prefix}.order`;
const offsetsTopic = `${prefix}-offsets`;
let admin: Admin;

/** The relay's URL: the least-privilege role instead of the superuser (the native server trusts local connections). */
function urlAs(user: string): string {
  const u = new URL(bed.db.url);
  u.username = user;
  u.password = '';
  return u.toString();
}

const BASE = ['--topic', `${prefix}.{aggregate_type}`, '--wal-sample', '0.2s', '--max-downtime', '5m', '--json'];

async function doctor(args: string[] = [], user = role, slotName = slot): Promise<{ run: CliResult; report: DoctorReport }> {
  const run = await runCli(['doctor', '--slot', slotName, ...BASE, ...args], {
    OUTBOX_TAIL_DATABASE_URL: urlAs(user),
    OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(','),
  });
  let report: DoctorReport;
  try {
    report = JSON.parse(run.stdout) as DoctorReport;
  } catch {
    throw new Error(`doctor printed no JSON (exit ${run.code}): ${run.stdout} ${run.stderr}`);
  }
  return { run, report };
}

function check(report: DoctorReport, name: string): CheckResult {
  const found = report.checks.find((c) => c.check === name);
  if (!found) throw new Error(`no check ${name} in ${JSON.stringify(report.checks.map((c) => c.check))}`);
  return found;
}

/**
 * Prune keeps every row the slot's catalog_xmin has not passed. A new slot's catalog_xmin starts at the oldest
 * of the server's other slots and running transactions, which on the shared server (other files' slots) can be
 * older than the old row: move the slot on, as a streaming relay would, until its catalog_xmin has passed the row.
 * A CHECKPOINT logs the running transactions that advancing the slot reads its new catalog_xmin from.
 */
async function slotPassedOldRow(): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    await query(bed.db.url, 'checkpoint');
    await query(bed.db.url, 'select pg_replication_slot_advance($1, pg_current_wal_lsn())', [slot]);
    const [row] = await query<{ passed: boolean }>(
      bed.db.url,
      `select age(o.xmin) > (select age(catalog_xmin) from pg_replication_slots where slot_name = $1) as passed from outbox o where aggregate_id = 'old'`,
      [slot],
    );
    if (row?.passed) return;
    if (Date.now() > deadline) throw new Error(`slot ${slot}'s catalog_xmin did not pass the old outbox row within 90 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A printed SQL fix, run as it is printed (up to the first "   (" remark) by the superuser. */
async function applySql(fix: string | null): Promise<void> {
  expect(fix).not.toBeNull();
  await query(bed.db.url, fix!.split('   (')[0]!);
}

/** A printed kafka-configs.sh fix, applied through the Admin API with the same topic and config. */
async function applyKafkaConfig(fix: string | null): Promise<void> {
  const m = /--entity-name (\S+) --add-config ([a-z.]+)=(\S+)/.exec(fix ?? '');
  expect(m, `a kafka-configs.sh fix: ${fix}`).not.toBeNull();
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: m![1]!, configEntries: [{ name: m![2]!, value: m![3]! }] }],
  });
}

async function waitForConfig(name: string, key: string, value: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const d = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name, configNames: [key] }] });
    if (d.resources[0]?.configEntries.find((e) => e.configName === key)?.configValue === value) return;
    if (Date.now() > deadline) throw new Error(`${name} ${key} is not ${value} after 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  // An old row, committed before the slot exists (so prune may delete it), and a fresh one: the topic is <prefix>.order.
  await query(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload, created_at) values ('order', 'old', 'OrderCreated', '{}', now() - interval '30 days')`,
  );
  // As the demo does: init (migrations, publication, slot), then the topic; the relay runs as a least-privilege role (docker/least-privilege.sql).
  const init = await runCli(['init', '--slot', slot], { OUTBOX_TAIL_DATABASE_URL: bed.db.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });
  expect(init.code, init.stderr).toBe(0);
  await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ('order', 'new', 'OrderCreated', '{}')`);
  await query(bed.db.url, `create role ${role} login replication nosuperuser`);
  await query(bed.db.url, `grant select, insert, update on outbox_tail_relay_position to ${role}`);
  admin = kafkaFor(bed.stack, 'doctor-test').admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] });
}, 120_000);

afterAll(async () => {
  await admin?.deleteTopics({ topics: [topic, offsetsTopic] }).catch(() => undefined);
  await admin?.disconnect();
  await bed.db.drop();
  for (const r of [role, `${role}_nopriv`]) await query(bed.stack.databaseUrl, `drop role if exists ${r}`).catch(() => undefined);
});

describe('outbox-tail doctor (real PostgreSQL and Kafka)', () => {
  it('reports every check ok, exit 0, on a stack set up as the demo does with a least-privilege relay role', async () => {
    const { run, report } = await doctor(['--partitions', '3']);
    expect(
      report.checks.filter((c) => c.status !== 'ok'),
      run.stdout,
    ).toEqual([]);
    expect(run.code).toBe(0);
    expect(report).toMatchObject({ status: 'ok', exitCode: 0, postgres: { user: role } });
    expect(check(report, 'kafka topics').found).toBe(`${topic} (3 partitions)`);
    // The human table: one row per check, in the same order.
    const table = await runCli(['doctor', '--slot', slot, ...BASE.filter((a) => a !== '--json')], {
      OUTBOX_TAIL_DATABASE_URL: urlAs(role),
      OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(','),
    });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^CHECK +STATUS +FOUND$/m);
    expect(table.stdout).toMatch(/^wal_level +ok +logical$/m);
    expect(table.stdout).toMatch(/^ok: \d+ ok, 0 warn, 0 fail \(exit 0\)$/m);
  });

  it('fails a dropped publication and one that publishes no INSERTs; the printed SQL fixes both', async () => {
    await query(bed.db.url, 'drop publication outbox_tail');
    const first = await doctor();
    expect(first.run.code).toBe(2);
    let report = first.report;
    expect(check(report, 'publication')).toMatchObject({ status: 'fail', found: 'outbox_tail does not exist' });
    await applySql(check(report, 'publication').fix);
    expect(check((await doctor()).report, 'publication').status).toBe('ok');

    await query(bed.db.url, `alter publication outbox_tail set (publish = 'update')`);
    ({ report } = await doctor());
    expect(check(report, 'publication')).toMatchObject({ status: 'fail', found: 'outbox_tail does not publish INSERTs' });
    await applySql(check(report, 'publication').fix);
    expect(check((await doctor()).report, 'publication').status).toBe('ok');
  });

  it('fails a role without REPLICATION and warns on a superuser; ALTER ROLE as printed fixes the first', async () => {
    const noPriv = `${role}_nopriv`;
    await query(bed.db.url, `create role ${noPriv} login nosuperuser`);
    const { run, report } = await doctor([], noPriv);
    expect(run.code).toBe(2);
    expect(check(report, 'role privileges')).toMatchObject({ status: 'fail', found: `${noPriv} has no REPLICATION` });
    await applySql(check(report, 'role privileges').fix);
    // Still a warn: it cannot write outbox_tail_relay_position (recover would need --since); the fix is printed.
    const after = check((await doctor([], noPriv)).report, 'role privileges');
    expect(after.status).toBe('warn');
    await applySql(after.fix);
    expect(check((await doctor([], noPriv)).report, 'role privileges').status).toBe('ok');

    const superuser = new URL(bed.db.url).username;
    const asSuper = await doctor([], superuser);
    expect(asSuper.run.code).toBe(1);
    expect(check(asSuper.report, 'role privileges')).toMatchObject({
      status: 'warn',
      found: `${superuser} is a superuser: the relay needs only LOGIN REPLICATION`,
    });
  });

  it('fails a slot with the wrong plugin; dropping it and running init as printed fixes it', async () => {
    const other = uniqueName('doctor_td');
    await query(bed.db.url, `select pg_create_logical_replication_slot($1, 'test_decoding')`, [other]);
    const { report } = await doctor([], role, other);
    const slotCheck = check(report, 'replication slot');
    expect(slotCheck).toMatchObject({ status: 'fail', found: `${other} is a logical slot with plugin test_decoding, not pgoutput` });
    expect(slotCheck.fix).toBe(`use another --slot, or drop it and run outbox-tail init --slot ${other}`);
    await query(bed.db.url, 'select pg_drop_replication_slot($1)', [other]);
    const init = await runCli(['init', '--slot', other], { OUTBOX_TAIL_DATABASE_URL: bed.db.url });
    expect(init.code, init.stderr).toBe(0);
    expect(check((await doctor([], role, other)).report, 'replication slot').status).toBe('ok');
    await query(bed.db.url, 'select pg_drop_replication_slot($1)', [other]);
  });

  it('warns when the oldest outbox row is older than twice the prune retention; running the printed prune fixes it', async () => {
    const superuser = new URL(bed.db.url).username;
    // The relay's least-privilege role may not read the outbox, so its age is read as the owner.
    const { report } = await doctor(['--prune-older-than', '1d'], superuser);
    const age = check(report, 'outbox size and age');
    expect(age.status).toBe('warn');
    expect(age.fix).toBe('outbox-tail prune --older-than 1d   (schedule it: cron or a systemd timer)');
    await slotPassedOldRow();
    const prune = await runCli([...age.fix!.split('   (')[0]!.split(' ').slice(1), '--slot', slot], { OUTBOX_TAIL_DATABASE_URL: bed.db.url });
    expect(prune.code, prune.stderr).toBe(0);
    expect(check((await doctor(['--prune-older-than', '1d'], superuser)).report, 'outbox size and age').status).toBe('ok');
  });

  it('fails a topic with the wrong partition count; adding partitions as printed fixes it', async () => {
    const { run, report } = await doctor(['--partitions', '6']);
    expect(run.code).toBe(2);
    const topics = check(report, 'kafka topics');
    expect(topics).toMatchObject({ status: 'fail', found: `${topic} has 3 partition(s), not 6` });
    const m = /--alter --topic (\S+) --partitions (\d+)/.exec(topics.fix ?? '');
    expect(m).not.toBeNull();
    await admin.createPartitions({ topicPartitions: [{ topic: m![1]!, count: Number(m![2]) }] });
    const deadline = Date.now() + 30_000;
    let after = check((await doctor(['--partitions', '6'])).report, 'kafka topics');
    while (after.status !== 'ok' && Date.now() < deadline) after = check((await doctor(['--partitions', '6'])).report, 'kafka topics');
    expect(after).toMatchObject({ status: 'ok', found: `${topic} (6 partitions)` });
  });

  it('fails min.insync.replicas above the replication factor (acks=all cannot succeed); the printed kafka-configs fix makes it pass', async () => {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
    });
    await waitForConfig(topic, 'min.insync.replicas', '2');
    const { run, report } = await doctor();
    expect(run.code).toBe(2);
    const isr = check(report, 'min.insync.replicas (acks=all)');
    expect(isr.status).toBe('fail');
    expect(isr.found).toContain(`${topic}: min.insync.replicas 2 > replication factor 1`);
    await applyKafkaConfig(isr.fix);
    await waitForConfig(topic, 'min.insync.replicas', '1');
    expect(check((await doctor()).report, 'min.insync.replicas (acks=all)').status).toBe('ok');
  });

  it('warns when topic retention is shorter than --recovery-window; the printed fix makes it pass', async () => {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
    });
    await waitForConfig(topic, 'retention.ms', '3600000');
    const { run, report } = await doctor(['--recovery-window', '2d']);
    expect(run.code).toBe(1);
    const retention = check(report, 'topic retention');
    expect(retention.status).toBe('warn');
    await applyKafkaConfig(retention.fix);
    await waitForConfig(topic, 'retention.ms', String(2 * 86_400_000));
    expect(check((await doctor(['--recovery-window', '2d'])).report, 'topic retention').status).toBe('ok');
  });

  it('exactly-once: fails a missing and a non-compacted offsets topic and a transaction timeout above the broker maximum; each printed fix makes it pass', async () => {
    const eos = ['--delivery', 'exactly-once', '--offsets-topic', offsetsTopic];
    let { report } = await doctor(eos);
    expect(check(report, 'offsets topic (exactly-once)')).toMatchObject({
      status: 'fail',
      fix: 'outbox-tail init --delivery exactly-once   (creates it compacted)',
    });
    // A topic created by hand with the default cleanup.policy (delete), as auto-creation would.
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: offsetsTopic, numPartitions: 1 }] });
    ({ report } = await doctor(eos));
    const offsets = check(report, 'offsets topic (exactly-once)');
    expect(offsets).toMatchObject({ status: 'fail', found: expect.stringContaining(`${offsetsTopic} has cleanup.policy=delete`) });
    await applyKafkaConfig(offsets.fix);
    await waitForConfig(offsetsTopic, 'cleanup.policy', 'compact');
    expect(check((await doctor(eos)).report, 'offsets topic (exactly-once)').status).toBe('ok');

    const tooLong = await doctor([...eos, '--transaction-timeout-ms', '100000000']);
    const txn = check(tooLong.report, 'transaction.max.timeout.ms');
    expect(txn.status).toBe('fail');
    expect(txn.found).toMatch(/^broker \d+ ms < --transaction-timeout-ms 100000000/);
    const flag = /^(--transaction-timeout-ms) (\d+)/.exec(txn.fix ?? '');
    expect(flag).not.toBeNull();
    expect(check((await doctor([...eos, flag![1]!, flag![2]!])).report, 'transaction.max.timeout.ms').status).toBe('ok');
  });

  it('reports an unreachable PostgreSQL and Kafka as failed checks with exit 2, never a crash', async () => {
    const run = await runCli(['doctor', '--slot', slot, ...BASE], {
      OUTBOX_TAIL_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      OUTBOX_TAIL_BROKERS: '127.0.0.1:1',
      OUTBOX_TAIL_CONNECT_TIMEOUT_MS: '1000',
    });
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.checks.map((c) => [c.check, c.status])).toEqual([
      ['postgres connection', 'fail'],
      ['kafka TLS', 'ok'],
      ['kafka connection', 'fail'],
    ]);
  });

  it('fails wal_level = replica with the fix, and the fix (ALTER SYSTEM, then the restart it names) makes it pass', async () => {
    // wal_level needs a restart, so a small server of its own (a second native PostgreSQL, ~2 s) instead of the shared one.
    const server = await NativePostgres.start({
      binDir: await findPostgresBinDir(undefined, process.env.PATH),
      settings: { wal_level: 'replica' },
      readyTimeoutMs: 60_000,
      log: () => undefined,
    });
    try {
      const run = async () =>
        runCli(['doctor', '--slot', slot, ...BASE], { OUTBOX_TAIL_DATABASE_URL: server.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });
      const before = await run();
      expect(before.code).toBe(2);
      const walLevel = check(JSON.parse(before.stdout) as DoctorReport, 'wal_level');
      expect(walLevel).toMatchObject({ status: 'fail', found: expect.stringContaining('replica') });
      expect(walLevel.fix).toContain('restart');
      await query(server.url, walLevel.fix!.split(';')[0]!);
      await server.restart('fast');
      expect(check(JSON.parse((await run()).stdout) as DoctorReport, 'wal_level').status).toBe('ok');
    } finally {
      await server.destroy();
    }
  });
});
