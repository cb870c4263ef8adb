/**
 * Decoding on a hot standby, measured (issue 43): what the primary pays per
 * event with the relay's slot on the primary against the slot on a hot standby,
 * and the end-to-end latency the standby's replay adds, side by side in one run.
 *
 *   npm run bench:standby -- [--rate 2000] [--seconds 30] [--warmup-seconds 5] [--rounds 2] [--json]
 *
 * One PostgreSQL 16 primary (bin/setup-postgres16.sh) with a hot standby
 * streaming from it through a physical slot (hot_standby_feedback on) and one
 * Kafka broker, all native on this machine. Each round runs both placements on
 * the same servers, the order alternating from round to round: a writer commits
 * single-row outbox transactions on the primary at --rate; the relay streams
 * from a fresh slot on the primary or on the standby. The standby is attached in
 * both placements, so the physical walsender's cost is in both and the
 * difference is the logical walsender. CPU is read from /proc for every process
 * of each server (the postmaster and its children) around the measured window.
 * Latency is Kafka's LogAppendTime minus the moment the INSERT was sent.
 * Never in CI.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startStack, type StackHandle } from '../stack/index.js';
import { NativePostgres } from '../stack/native-postgres.js';
import { childrenOf } from '../stack/process.js';
import { machineCpuSeconds, processCpuSeconds } from '../support/proc-stats.js';
import { benchKafka, createTopic, percentile, readAppendTimes, recordCount } from './bench-kafka.js';
import { createBenchDatabase, dropSlot, withClient } from './bench-db.js';
import { isStreaming, relayEnv, RELAY_BIN, ROOT, spawnNode, type BenchProcess } from './bench-process.js';
import { runWriter } from './writer.js';

const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '30' },
    'warmup-seconds': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  console.log(`npm run bench:standby -- [--rate 2000] [--seconds 30] [--warmup-seconds 5] [--rounds 2] [--json]
  the primary's CPU per event with the relay's slot on the primary and on a hot standby (PostgreSQL 16),
  and the end-to-end latency replay adds, side by side; the placement that goes first alternates per round`);
  process.exit(0);
}
const positive = (name: string, value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
};
const RATE = positive('rate', flags.rate!);
const SECONDS = positive('seconds', flags.seconds!);
const WARMUP = Number(flags['warmup-seconds']);
const ROUNDS = positive('rounds', flags.rounds!);
const log = (line: string) => (flags.json ? process.stderr : process.stdout).write(`${line}\n`);
const round1 = (n: number) => Math.round(n * 10) / 10;

type Placement = 'primary' | 'standby';

interface PlacementResult {
  placement: Placement;
  round: number;
  order: number;
  rate: number;
  events: number;
  achieved_rate: number;
  /** CPU per event (µs, user + system) of every process of each server, and of the relay. */
  us_per_event: { primary: number; primary_logical_walsender: number | null; standby: number; standby_logical_walsender: number | null; relay: number };
  machine_busy_cores: number | null;
  latency_ms: { p50: number; p99: number; p999: number; max: number };
  /** The primary's view of the standby (pg_stat_replication.replay_lag), sampled every second: its max, ms. */
  replay_lag_max_ms: number | null;
  loadavg_1m: number;
}

/** CPU seconds of a server's postmaster and its children, by pid. */
function serverCpu(server: NativePostgres): Map<number, number> {
  const pid = server.pid();
  if (pid === undefined) throw new Error('server not running');
  const out = new Map<number, number>();
  for (const p of [pid, ...childrenOf(pid)]) {
    const cpu = processCpuSeconds(p);
    if (cpu !== null) out.set(p, cpu);
  }
  return out;
}

/** CPU seconds spent between two samples; a process forked in between counts whole (one that ended in between is lost: backends here live through the window). */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

async function activeWalsender(url: string, slot: string): Promise<number | null> {
  return withClient(
    url,
    async (c) =>
      (await c.query<{ pid: number | null }>('select active_pid as pid from pg_replication_slots where slot_name = $1', [slot])).rows[0]?.pid ?? null,
  );
}

/** On a standby the creation waits for a running-xacts record: the primary is asked for one meanwhile. */
async function createSlotOn(placement: Placement, urls: Record<Placement, string>, slot: string): Promise<void> {
  const nudge =
    placement === 'standby'
      ? setInterval(() => void withClient(urls.primary, (c) => c.query('select pg_log_standby_snapshot()')).catch(() => undefined), 300)
      : undefined;
  try {
    await withClient(urls[placement], (c) => c.query("select pg_create_logical_replication_slot($1, 'pgoutput')", [slot]));
  } finally {
    if (nudge) clearInterval(nudge);
  }
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const binDir = execFileSync('bash', [`${ROOT}bin/setup-postgres16.sh`], { encoding: 'utf8' }).trim();
  let stack: StackHandle | undefined;
  let standby: NativePostgres | undefined;
  let relay: BenchProcess | undefined;
  try {
    stack = await startStack({ provider: 'native', postgresBinDir: binDir, log: (l) => log(`[stack] ${l}`) });
    const primary = stack.postgres as unknown as NativePostgres;
    standby = await NativePostgres.startStandby(primary, {
      binDir,
      settings: { wal_level: 'logical', hot_standby_feedback: 'on' },
      readyTimeoutMs: 60_000,
      log: (l) => log(`[standby] ${l}`),
      physicalSlot: 'outbox_tail_bench_standby',
    });
    const db = await createBenchDatabase(stack.databaseUrl);
    const standbyUrl = (() => {
      const u = new URL(standby.url);
      u.pathname = `/${db.name}`;
      return u.toString();
    })();
    const urls: Record<Placement, string> = { primary: db.url, standby: standbyUrl };
    const kafka = benchKafka(stack.brokers);
    const admin = kafka.admin();
    await admin.connect();
    const runId = Date.now().toString(36);
    const results: PlacementResult[] = [];
    try {
      for (let r = 1; r <= ROUNDS; r++) {
        const order: Placement[] = r % 2 === 1 ? ['primary', 'standby'] : ['standby', 'primary'];
        for (const [i, placement] of order.entries()) {
          const slot = `bench_${placement}_${runId}_${r}`;
          const type = `standby_bench_${placement}_${runId}_${r}`;
          const topic = `outbox.event.${type}`;
          await createTopic(admin, topic, 1);
          // A quiet start: the previous run's rows and WAL neither vacuumed nor checkpointed inside this window.
          await withClient(db.url, async (c) => {
            await c.query('truncate outbox');
            await c.query('checkpoint');
          });
          await createSlotOn(placement, urls, slot);
          relay = spawnNode({
            name: `relay-on-${placement}`,
            script: RELAY_BIN,
            env: relayEnv({ databaseUrl: urls[placement], brokers: stack.brokers, slot }),
          });
          await relay.waitForLog(isStreaming, 60_000);
          const walsender = await activeWalsender(urls[placement], slot);
          log(`round ${r}: relay on the ${placement}: ${RATE}/s for ${WARMUP} s warm-up + ${SECONDS} s`);
          const before = {
            primary: serverCpu(primary),
            standby: serverCpu(standby),
            relay: relay.cpuSeconds(),
            machine: machineCpuSeconds(),
            at: performance.now(),
          };
          let lagMax: number | null = null;
          const lagTimer = setInterval(() => {
            void withClient(db.url, (c) =>
              c.query<{ ms: number | null }>(
                "select (extract(epoch from replay_lag) * 1000)::float8 as ms from pg_stat_replication where application_name <> '' limit 1",
              ),
            )
              .then(({ rows }) => {
                const ms = rows[0]?.ms;
                if (ms !== null && ms !== undefined) lagMax = Math.max(lagMax ?? 0, ms);
              })
              .catch(() => undefined);
          }, 1000);
          const writer = await runWriter({ url: db.url, table: 'outbox', aggregateType: type, rate: RATE, seconds: SECONDS, warmupSeconds: WARMUP });
          clearInterval(lagTimer);
          const endLsn = await withClient(db.url, async (c) => (await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn);
          await waitFor(`${writer.written} records in ${topic} and slot ${slot} confirmed to ${endLsn}`, 120_000, async () => {
            if ((await recordCount(admin, topic)) < writer.written) return false;
            return withClient(urls[placement], async (c) => {
              const { rows } = await c.query<{ done: boolean }>(
                'select confirmed_flush_lsn >= $2::pg_lsn as done from pg_replication_slots where slot_name = $1',
                [slot, endLsn],
              );
              return rows[0]?.done === true;
            });
          });
          const after = {
            primary: serverCpu(primary),
            standby: serverCpu(standby),
            relay: relay.cpuSeconds(),
            machine: machineCpuSeconds(),
            at: performance.now(),
          };
          const perEvent = (seconds: number) => round1((seconds * 1e6) / writer.written);
          const walsenderUs = (server: Placement) =>
            placement === server && walsender !== null ? perEvent((after[server].get(walsender) ?? 0) - (before[server].get(walsender) ?? 0)) : null;
          await relay.stop();
          const { times } = await readAppendTimes(kafka, topic, writer.written);
          const latencies: number[] = [];
          for (const [id, sentAt] of writer.commitTimes) {
            const t = times.get(id);
            if (t === undefined) throw new Error(`record ${id} written on the primary is not in ${topic}`);
            latencies.push(t - sentAt);
          }
          latencies.sort((a, b) => a - b);
          const seconds = (after.at - before.at) / 1000;
          const result: PlacementResult = {
            placement,
            round: r,
            order: i + 1,
            rate: RATE,
            events: writer.written,
            achieved_rate: Math.round(writer.measured / SECONDS),
            us_per_event: {
              primary: perEvent(spent(before.primary, after.primary)),
              primary_logical_walsender: walsenderUs('primary'),
              standby: perEvent(spent(before.standby, after.standby)),
              standby_logical_walsender: walsenderUs('standby'),
              relay: perEvent(after.relay - before.relay),
            },
            machine_busy_cores: before.machine && after.machine ? Math.round(((after.machine.busy - before.machine.busy) / seconds) * 100) / 100 : null,
            latency_ms: {
              p50: round1(percentile(latencies, 50)),
              p99: round1(percentile(latencies, 99)),
              p999: round1(percentile(latencies, 99.9)),
              max: round1(latencies[latencies.length - 1] ?? NaN),
            },
            replay_lag_max_ms: lagMax === null ? null : round1(lagMax),
            loadavg_1m: Math.round(loadavg()[0]! * 100) / 100,
          };
          log(
            `  primary ${result.us_per_event.primary} us/event (logical walsender ${result.us_per_event.primary_logical_walsender ?? '-'}), standby ${result.us_per_event.standby} us/event (logical walsender ${result.us_per_event.standby_logical_walsender ?? '-'}), relay ${result.us_per_event.relay}; latency p50 ${result.latency_ms.p50} / p99 ${result.latency_ms.p99} ms; replay lag max ${result.replay_lag_max_ms ?? '-'} ms`,
          );
          results.push(result);
          relay = undefined;
          await dropSlot(urls[placement], slot);
        }
      }
    } finally {
      await admin.disconnect();
      await db.drop().catch(() => undefined);
    }
    const summary = summarize(results);
    const versions = { postgres: '16.10', kafka: stack.versions.kafka, node: process.versions.node };
    const output = {
      bench: 'standby',
      rate: RATE,
      seconds: SECONDS,
      warmup_seconds: WARMUP,
      rounds: ROUNDS,
      cores: cpus().length,
      versions,
      summary,
      runs: results,
    };
    if (flags.json) console.log(JSON.stringify(output, null, 2));
    else log(table(summary));
  } finally {
    await relay?.stop().catch(() => undefined);
    await standby?.destroy().catch(() => undefined);
    await stack?.stop();
  }
}

type Summary = Record<Placement, { primary_us: number; standby_us: number; relay_us: number; p50_ms: number; p99_ms: number; runs: number }>;

/** Medians over the rounds, per placement. */
function summarize(results: PlacementResult[]): Summary {
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return round1(s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2);
  };
  const of = (p: Placement) => {
    const rs = results.filter((r) => r.placement === p);
    return {
      primary_us: median(rs.map((r) => r.us_per_event.primary)),
      standby_us: median(rs.map((r) => r.us_per_event.standby)),
      relay_us: median(rs.map((r) => r.us_per_event.relay)),
      p50_ms: median(rs.map((r) => r.latency_ms.p50)),
      p99_ms: median(rs.map((r) => r.latency_ms.p99)),
      runs: rs.length,
    };
  };
  return { primary: of('primary'), standby: of('standby') };
}

function table(s: Summary): string {
  const rows = [
    ['relay decodes on', "primary's CPU us/event", "standby's CPU us/event", 'relay us/event', 'latency p50 ms', 'p99 ms'],
    ...(['primary', 'standby'] as const).map((p) => [p, s[p].primary_us, s[p].standby_us, s[p].relay_us, s[p].p50_ms, s[p].p99_ms].map(String)),
  ];
  return `\nmedians of ${s.primary.runs} round(s) at ${RATE}/s:\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
