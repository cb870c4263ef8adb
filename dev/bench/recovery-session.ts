/**
 * A verify / replay / prune session at size (issue 15): the relay publishes
 * a backlog, is killed, more rows are committed while it is down, then
 * `verify` finds them, `replay --only-missing` sends them, `verify` finds
 * none, `prune --dry-run` counts; then the slot is dropped, more rows are committed,
 * and `recover` rebuilds it from the recorded position. Timings and each command's peak RSS.
 *
 *   node --import tsx dev/bench/recovery-session.ts [--published 200000] [--unpublished 100000]
 *
 * Progress on stderr, one JSON object on stdout.
 */
import { parseArgs } from 'node:util';
import { startStack } from '../stack/index.js';
import { createBenchDatabase, createSlot, insertBacklog, withClient } from './bench-db.js';
import { benchKafka, recordCount } from './bench-kafka.js';
import { isStreaming, RELAY_BIN, relayEnv, spawnNode } from './bench-process.js';

const { values } = parseArgs({ options: { published: { type: 'string', default: '200000' }, unpublished: { type: 'string', default: '100000' } } });
const PUBLISHED = Number(values.published);
const UNPUBLISHED = Number(values.unpublished);
const log = (line: string) => process.stderr.write(`${line}\n`);

const stack = await startStack({ log: (l) => log(`  ${l}`) });
const db = await createBenchDatabase(stack.databaseUrl);
const env = { OUTBOX_TAIL_DATABASE_URL: db.url, OUTBOX_TAIL_BROKERS: stack.brokers.join(',') };
const result: Record<string, unknown> = {
  published_rows: PUBLISHED,
  unpublished_rows: UNPUBLISHED,
  postgres: stack.versions.postgres,
  kafka: stack.versions.kafka,
};
try {
  const from = new Date(Date.now() - 60_000).toISOString();
  await createSlot(db.url, 'recovery_session');
  const relay = spawnNode({ name: 'relay', script: RELAY_BIN, env: relayEnv({ databaseUrl: db.url, brokers: stack.brokers, slot: 'recovery_session' }) });
  await relay.waitForLog(isStreaming);
  await insertBacklog(db.url, 'outbox', 'order', PUBLISHED, 100);
  const kafka = benchKafka(stack.brokers);
  const admin = kafka.admin();
  await admin.connect();
  while ((await recordCount(admin, 'outbox.event.order').catch(() => 0)) < PUBLISHED) await new Promise((r) => setTimeout(r, 200));
  await admin.disconnect();
  await relay.stop();
  log(`relay published ${PUBLISHED} rows and stopped; committing ${UNPUBLISHED} more`);
  await insertBacklog(db.url, 'outbox', 'order', UNPUBLISHED, 100);

  const run = async (name: string, args: string[]) => {
    const started = performance.now();
    const p = spawnNode({ name, script: RELAY_BIN, args, env });
    const { code } = await p.exited;
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    // The report is the one stdout line that is not a pino log line.
    const json = p.logs.map((l) => l as Record<string, unknown>).find((l) => !('level' in l) && !('msg' in l)) ?? null;
    log(`${name}: exit ${code}, ${seconds} s, peak RSS ${Math.round(p.peakRssMb())} MB`);
    return { exit: code, seconds, peak_rss_mb: Math.round(p.peakRssMb()), report: json };
  };
  result.verify_before = await run('verify', ['verify', '--from', from, '--json']);
  result.replay_dry_run = await run('replay --only-missing --dry-run', ['replay', '--from', from, '--only-missing', '--dry-run', '--json']);
  result.replay = await run('replay --only-missing', ['replay', '--from', from, '--only-missing', '--json']);
  result.verify_after = await run('verify', ['verify', '--from', from, '--json']);
  result.prune_dry_run = await run('prune --dry-run', ['prune', '--slot', 'recovery_session', '--older-than', '0s', '--dry-run', '--json']);
  // The slot lost while no relay runs, and more rows committed with no slot at all: recover rebuilds it from the
  // position the relay recorded (its margin, 1 h, reaches back over the whole backlog here).
  await withClient(db.url, (c) => c.query('select pg_drop_replication_slot($1)', ['recovery_session']));
  await insertBacklog(db.url, 'outbox', 'order', UNPUBLISHED / 2, 100);
  result.recover = await run('recover', ['recover', '--slot', 'recovery_session', '--json']);
  result.verify_after_recover = await run('verify', ['verify', '--from', from, '--json']);
} finally {
  await db.drop().catch(() => undefined);
  await stack.stop();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
