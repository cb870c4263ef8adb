import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { initOutbox } from '../../src/commands/init/init.js';
import { packageRoot } from '../../src/shared/package-root.js';
import { readSlotStatus } from '../../src/postgres/slots/slot-status.js';
import { createOrder, createOrdersTable, ORDER_AGGREGATE } from './order-app.js';
import { DEFAULT_OUTBOX_TABLE } from '../../src/pipeline/assemble/outbox-columns.js';
import { startStack } from '../stack/index.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const SLOT = 'orders_outbox';
const PUBLICATION = 'outbox_tail';
const TOPIC = `outbox.event.${ORDER_AGGREGATE}`;
// The relay runs as a least-privilege role, as in production (docker/least-privilege.sql): LOGIN REPLICATION and
// its position table, nothing else. A password makes the same URL work on trust (native) and scram (container) servers.
const RELAY_ROLE = 'outbox_tail_demo_relay';
const RELAY_PASSWORD = 'outbox-tail-demo';

async function createRelayRole(client: pg.Client): Promise<string> {
  const exists = await client.query('select 1 from pg_roles where rolname = $1', [RELAY_ROLE]);
  const verb = exists.rowCount ? 'alter' : 'create';
  await client.query(`${verb} role ${RELAY_ROLE} login replication nosuperuser password '${RELAY_PASSWORD}'`);
  await client.query(`grant select, insert, update on outbox_tail_relay_position to ${RELAY_ROLE}`);
  return RELAY_ROLE;
}

function urlAs(databaseUrl: string, user: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = user;
  url.password = password;
  return url.toString();
}

interface DoctorVerdict {
  status: string;
  checks: Array<{ check: string; status: string; found: string; fix: string | null }>;
}

/** `outbox-tail doctor --json` as the relay's role: the demo's stack is set up right, so every check should be ok. */
function runDoctor(env: NodeJS.ProcessEnv): Promise<DoctorVerdict> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(packageRoot(), 'bin/outbox-tail.js'), 'doctor', '--slot', SLOT, '--json'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let errText = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (errText += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as DoctorVerdict);
      } catch {
        reject(new Error(`outbox-tail doctor exited ${code} without a JSON report: ${errText.trim() || out.trim()}`));
      }
    });
  });
}

/**
 * `npm run demo [-- --orders N --rate R]`: the main job end to end on a local stack. Starts
 * Postgres and Kafka, runs init, starts the relay as a child process, writes
 * orders at a steady rate with a live progress line, and prints a summary.
 * Exit code 0 iff every order's event reached Kafka.
 */
export async function demo(options: { orders: number; rate: number }): Promise<number> {
  const err = (line: string) => process.stderr.write(`${line}\n`);
  err(`demo: starting a local PostgreSQL + Kafka (OUTBOX_TAIL_STACK=${process.env.OUTBOX_TAIL_STACK ?? 'auto'})`);
  const stack = await startStack({ log: (l) => err(`  ${l}`) });
  const logDir = mkdtempSync(join(tmpdir(), 'outbox-tail-demo-'));
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  let relayExit: Promise<number | null> = Promise.resolve(null);
  let stopRelay = () => {};
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'outbox-tail-demo', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `demo-${Date.now()}`, maxWaitTimeInMs: 100 });
  try {
    await client.connect();
    const { migrations } = await initOutbox(client, { publication: PUBLICATION, table: DEFAULT_OUTBOX_TABLE, slot: SLOT });
    await createOrdersTable(client);
    const relayEnv = {
      ...process.env,
      OUTBOX_TAIL_DATABASE_URL: urlAs(stack.databaseUrl, await createRelayRole(client), RELAY_PASSWORD),
      OUTBOX_TAIL_BROKERS: stack.brokers.join(','),
    };
    err(`demo: init done (migrations applied: ${migrations.applied.join(', ') || 'none'}; slot ${SLOT}; publication ${PUBLICATION})`);

    const relayLog = join(logDir, 'relay.log');
    const out = createWriteStream(relayLog);
    const relay = spawn(process.execPath, [join(packageRoot(), 'bin/outbox-tail.js'), '--slot', SLOT], {
      env: { ...relayEnv, OUTBOX_TAIL_STATUS_INTERVAL_MS: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    relay.stdout.pipe(out);
    relay.stderr.pipe(out);
    relayExit = new Promise((resolve) => relay.once('exit', (code) => resolve(code)));
    stopRelay = () => relay.kill('SIGTERM');
    err(`demo: relay started (pid ${relay.pid}, JSON logs in ${relayLog}, metrics on http://127.0.0.1:9464/metrics)`);

    const ids = new Set<string>();
    let records = 0;
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsAndWait(admin, [{ topic: TOPIC }]);
    await admin.disconnect();
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        records++;
        const id = message.headers?.id?.toString();
        if (id) ids.add(id);
      },
    });

    const status = () => readSlotStatus(client, SLOT, PUBLICATION);
    const progress = async (written: number) => {
      const s = await status();
      process.stderr.write(
        `\r  orders written ${written}/${options.orders}  records in Kafka ${records}  distinct ids ${ids.size}  confirmed lag ${s.lagBytes ?? '-'} bytes   `,
      );
    };
    const started = Date.now();
    let written = 0;
    let lastProgress = 0;
    const { rows } = await client.query<{ max: string | null }>('select max(id)::text as max from orders');
    const firstId = Number(rows[0]?.max ?? 0) + 1;
    while (written < options.orders) {
      await createOrder(client, firstId + written);
      written++;
      const due = started + (written / options.rate) * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (Date.now() - lastProgress > 500) {
        lastProgress = Date.now();
        await progress(written);
      }
    }
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const s = await status();
      if (ids.size >= options.orders && s.lagBytes === 0) break;
      await progress(written);
      await new Promise((r) => setTimeout(r, 250));
    }
    await progress(written);
    process.stderr.write('\n');
    const seconds = (Date.now() - started) / 1000;
    const [counts] = (
      await client.query<{ orders: number; outbox: number }>(
        `select (select count(*)::int from orders where id >= $1) as orders, (select count(*)::int from outbox where aggregate_type = $2 and aggregate_id::bigint >= $1) as outbox`,
        [firstId, ORDER_AGGREGATE],
      )
    ).rows;
    const final = await status();
    const doctor = await runDoctor(relayEnv);
    const notOk = doctor.checks.filter((c) => c.status !== 'ok');
    const ok = counts!.orders === options.orders && counts!.outbox === options.orders && ids.size >= options.orders;
    const summary = {
      orders: counts!.orders,
      outbox_rows: counts!.outbox,
      kafka_records: records,
      distinct_ids_in_kafka: ids.size,
      confirmed_lag_bytes: final.lagBytes,
      confirmed_flush_lsn: final.confirmedFlushLsn,
      seconds: Number(seconds.toFixed(1)),
      relay_role: RELAY_ROLE,
      doctor: `${doctor.status} (${doctor.checks.length - notOk.length}/${doctor.checks.length} checks ok)`,
      ok,
    };
    process.stdout.write(
      `\nsummary\n${Object.entries(summary)
        .map(([k, v]) => `  ${k.padEnd(22)} ${v}`)
        .join('\n')}\n${notOk.map((c) => `  doctor ${c.status}: ${c.check}: ${c.found}${c.fix ? ` (fix: ${c.fix})` : ''}\n`).join('')}`,
    );
    return ok ? 0 : 1;
  } finally {
    stopRelay();
    const code = await relayExit;
    if (code !== null && code !== 0) err(`demo: relay exited with code ${code} (logs in ${logDir})`);
    await consumer.disconnect().catch(() => undefined);
    await client.end().catch(() => undefined);
    await stack.stop();
  }
}

// npm run demo -- --orders 5000 --rate 500
const { values } = parseArgs({
  options: { orders: { type: 'string', default: '2000' }, rate: { type: 'string', default: '200' } },
  strict: true,
});
const orders = Number(values.orders);
const rate = Number(values.rate);
if (!Number.isInteger(orders) || orders <= 0 || !(rate > 0)) {
  process.stderr.write(`demo: --orders must be a positive integer and --rate a positive number (got --orders ${values.orders} --rate ${values.rate})\n`);
  process.exit(2);
}
demo({ orders, rate }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
