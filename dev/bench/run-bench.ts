/**
 * outbox-tail benchmark (issue 6): throughput, latency and memory of the real
 * relay process, side by side with the physical limits measured in the same
 * run (decode with a null sink, Kafka alone) and the polling-publisher
 * baseline. See README.md, Performance.
 *
 *   npm run bench -- [--events 200000] [--json] [--quick] [--compare debezium|conduit] [--plot]
 *
 * Progress goes to stderr; without --json stdout gets a table, with --json
 * the last line of stdout is one JSON object.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { Admin, Kafka } from 'kafkajs';
import pg from 'pg';
import { configSchema } from '../../src/config/config-schema.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import { topicBytes } from './topic-bytes.js';
import { Lsn } from '../../src/shared/lsn.js';
import { startStack, type StackHandle } from '../stack/index.js';
import {
  confirmedFlushLsn,
  createBenchDatabase,
  createSlot,
  currentWalLsn,
  dropSlot,
  insertBacklog,
  lastCommitEndLsn,
  PAYLOAD_SQL,
  POLLING_TABLE,
  walsenderPid,
  withClient,
  type BenchDatabase,
} from './bench-db.js';
import { cpuWindow, machineCpuSeconds, processCpuSeconds, type CpuWindow } from '../support/proc-stats.js';
import { SHIPPED_NODE_OPTIONS } from './shipped-node-options.js';
import { benchKafka, createTopic, percentile, readAppendTimes, recordCount, type RecordIdentity } from './bench-kafka.js';
import { isStreaming, RELAY_BIN, relayEnv, ROOT, spawnNode, type BenchProcess, type LogLine } from './bench-process.js';
import { nowMs, runWriter, type WriterResult } from './writer.js';
import { resolveNodeBinary } from '../support/node-binary.js';
import { compareVariants } from './compare-variants.js';
import { tracingCost } from './tracing-cost.js';
import { prepareWriteSide, runWriteSide, WRITE_SIDE_ORDERS_TABLE, WRITE_SIDE_VARIANTS, type WriteSideVariant } from './write-side.js';
import { installDebezium, isDebeziumStreaming, spawnDebezium, type DebeziumInstall } from './debezium/debezium-relay.js';
import { matchRecords, type Peer, type RecordMatch } from './debezium/record-match.js';
import { conduitErrors, DEFAULT_CONDUIT_PIPELINE, installConduit, isConduitStreaming, spawnConduit, type ConduitInstall } from './conduit/conduit-relay.js';
import { writeCharts, type BenchResultLike } from './bench-charts.js';
import { benchValueFormat, valueFormatLine } from './value-format.js';
import { outboxRecordSize, producerPerfTest, type PerfTestLimit } from './perf-test-limit.js';
import { shardCatchupFigures, speedups, usPerEvent, type ShardCatchupFigures } from './shard-figures.js';
import { MAX_SHARDS, shardName } from '../../src/shared/shard-spec.js';

// ---------------------------------------------------------------- options

const SCENARIOS = ['catchup', 'catchup_batched', 'limits', 'steady', 'big_txn', 'polling', 'write_side', 'tracing', 'value_format', 'shards'] as const;
type Scenario = (typeof SCENARIOS)[number];
/** `shards` runs only when asked for (--shards LIST, or --scenarios shards): N relays at once on a 2-core machine is a run of its own. */
const DEFAULT_SCENARIOS = SCENARIOS.filter((s) => s !== 'shards');

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string' },
    'big-rows': { type: 'string' },
    rates: { type: 'string' },
    'steady-seconds': { type: 'string' },
    'write-seconds': { type: 'string' },
    'write-concurrency': { type: 'string' },
    'write-rounds': { type: 'string' },
    'warmup-seconds': { type: 'string' },
    partitions: { type: 'string' },
    scenarios: { type: 'string' },
    shards: { type: 'string' },
    'shard-rate': { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-out': { type: 'string' },
    quick: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    brokers: { type: 'string' },
    'relay-env': { type: 'string', multiple: true },
    'node-args': { type: 'string' },
    profile: { type: 'string' },
    'poll-interval-ms': { type: 'string' },
    'kafka-client': { type: 'string' },
    compression: { type: 'string' },
    'dump-latency': { type: 'string' },
    compare: { type: 'string' },
    'debezium-java-opts': { type: 'string' },
    'debezium-prop': { type: 'string', multiple: true },
    'compare-first': { type: 'string' },
    'compare-rounds': { type: 'string' },
    'conduit-pipeline': { type: 'string' },
    delivery: { type: 'string' },
    'first-delivery': { type: 'string' },
    'relay-node': { type: 'string' },
    plot: { type: 'boolean', default: false },
    'plot-from': { type: 'string' },
    'plot-dir': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (flags.help) {
  process.stdout.write(`npm run bench -- [options]

  --events N            catch-up backlog size (default 200000; --quick 20000)
  --big-rows N          rows of the big transaction (default 100000; --quick 20000)
  --rates A,B           steady writer rates per second (default 2000,5000); before the relays at each rate,
                        the Kafka floor: the relay's sink alone at that rate beside the same writer
                        (dev/bench/kafka-latency-floor.ts; "steady_floor" in the JSON)
  --steady-seconds S    measured seconds per steady rate (default 30; --quick 5)
  --write-seconds S     write_side: seconds each way of writing runs (default 10; --quick 3)
  --write-concurrency C write_side: clients writing at once, as fast as they go (default 4)
  --write-rounds R      write_side: every way of writing R times, in alternating order (default 3; --quick 2)
  --warmup-seconds S    seconds written before measuring, per steady run (default 2; --quick 1;
                        10 with --compare: Debezium's JIT needs seconds to warm up; Conduit gets the same)
  --partitions P        partitions of every bench topic (default 3)
  --scenarios LIST      subset of ${SCENARIOS.join(',')}
                        (shards runs only when named here or given --shards)
  --shards LIST         shards: shard counts, e.g. 1,2,4 (default 1,2,4): per N, init --shards N on a truncated
                        outbox, --events single-row transactions, then N relays (run --shard i/N) at once;
                        catch-up events/s, per-relay peak RSS, walsender and relay CPU per event. Without
                        --scenarios, adds shards to the default scenarios
  --shard-rate R        shards: after each catch-up, a steady writer at R/s on the same N relays, its p99
                        (default 5000; 0 skips it); --steady-seconds and --warmup-seconds apply
  --json                last stdout line = one JSON object
  --json-out FILE       also write that JSON object to FILE (with the table on stdout)
  --quick               small sizes: a smoke run (~1-2 min)
  --database-url URL    use this PostgreSQL (superuser, wal_level=logical) instead of a local stack
  --brokers H:P,...     use these Kafka brokers instead of a local stack
  --relay-env K=V       extra OUTBOX_TAIL_* setting for every relay process (repeatable)
  --node-args=FLAGS     node flags for every relay process (default: the shipped NODE_OPTIONS,
                        ${SHIPPED_NODE_OPTIONS}, as the Dockerfile and the systemd unit set;
                        --node-args= runs bare node)
  --profile DIR         run the relay processes with --cpu-prof into DIR
  --poll-interval-ms N  polling baseline's sleep when nothing is unsent (default 10)
  --compression C       the relay's --compression (default none); a list (none,gzip,snappy,lz4,zstd)
                        benches each codec in a run of its own on one stack, side by side, with the
                        bytes per event on the broker (catchup.broker_bytes_per_event)
  --kafka-client C      kafkajs (default) or platformatic: the relay's --kafka-client, also used by
                        the Kafka limit and the polling baseline. kafkajs,platformatic runs the whole
                        bench once per client on one stack, side by side under "kafka_clients"
  --delivery D          at-least-once (default), exactly-once, or both: the relay scenarios (catchup,
                        catchup_batched, big_txn, steady) once per mode, interleaved in the same run
                        (the mode that goes first alternates from scenario to scenario)
  --first-delivery D    with --delivery both: the mode of the first scenario (default at-least-once)
  --relay-node LIST     node binaries for the relay processes, comma separated: pinned majors (24, 22)
                        or paths (/usr/bin/node). With two or more, the whole bench runs once per
                        runtime, one after the other on one stack, and the JSON has them side by side
                        under "runtimes" (with the ratio of each figure to the first runtime's)
  --plot                write SVG charts of this run (catch-up against the limits, steady latency,
                        RSS over time) into --plot-dir (dev/bench/bench-charts.ts)
  --plot-from FILE      only draw the charts of a recorded run (a --json-out FILE), nothing is run
  --plot-dir DIR        where the charts go (default docs/images, which docs/performance.md shows)
  --dump-latency DIR    write each steady run's per-record latencies (ms since the writer's start,
                        latency ms) to DIR/<label>-<rate>.json, to look for stalls behind a p99
  --compare debezium    also run Debezium Server (fetched once into ~/.cache/outbox-tail/debezium, Java 21+)
                        on the catch-up backlog and the steady rates, and report both relays in one table
                        and under "compare" in the JSON (dev/bench/debezium/; never in CI)
  --debezium-java-opts=FLAGS  JVM flags for Debezium Server (default none: its run.sh sets none either)
  --debezium-prop K=V   override a setting of dev/bench/debezium/application.properties (repeatable),
                        e.g. debezium.source.poll.interval.ms=10 for a latency-tuned Debezium
                        Debezium delivers at least once: with --delivery both it runs beside the
                        at-least-once relay only (compare.*.outbox_tail is that relay's result)
  --compare conduit     also run Conduit (Go; built once from its Go module into ~/.cache/outbox-tail/conduit)
                        with its Postgres source and Kafka destination, the same way: same backlog, rates,
                        finish line and record check, under "compare" in the JSON (dev/bench/conduit/; never in CI)
  --conduit-pipeline F  Conduit's pipeline file instead of dev/bench/conduit/pipeline.yml (e.g. a copy with
                        smaller batches for latency)
  --compare-first R     outbox-tail (default) or the peer (debezium, conduit): which relay runs first on each
                        backlog and rate
  --compare-rounds N    with --compare: catch-up rounds, each on a fresh backlog, the relay that goes first
                        alternating from round to round (default 2); before the first, the broker is warmed
                        with the Kafka client alone (untimed) unless the limits scenario already did. Conduit delivers at least once too: with --delivery both it runs
                        beside the at-least-once relay only
`);
  process.exit(0);
}

const quick = flags.quick;
const num = (v: string | undefined, d: number) => (v === undefined ? d : Number(v));
const opts = {
  events: num(flags.events, quick ? 20_000 : 200_000),
  bigRows: num(flags['big-rows'], quick ? 20_000 : 100_000),
  rates: (flags.rates ?? '2000,5000').split(',').map(Number),
  steadySeconds: num(flags['steady-seconds'], quick ? 5 : 30),
  writeSeconds: num(flags['write-seconds'], quick ? 3 : 10),
  writeConcurrency: num(flags['write-concurrency'], 4),
  writeRounds: num(flags['write-rounds'], quick ? 2 : 3),
  warmupSeconds: num(flags['warmup-seconds'], quick ? 1 : 2),
  partitions: num(flags.partitions, 3),
  scenarios: new Set<Scenario>(
    (flags.scenarios?.split(',') as Scenario[] | undefined) ?? [...DEFAULT_SCENARIOS, ...(flags.shards ? (['shards'] as const) : [])],
  ),
  shards: (flags.shards ?? '1,2,4').split(',').map(Number),
  shardRate: num(flags['shard-rate'], 5000),
  pollIntervalMs: num(flags['poll-interval-ms'], 10),
  relayEnv: Object.fromEntries((flags['relay-env'] ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) as Record<string, string>,
  // As deployed (Dockerfile, systemd unit) unless told otherwise; --node-args= (empty) measures bare node.
  nodeArgs: (flags['node-args'] ?? SHIPPED_NODE_OPTIONS).split(/\s+/).filter(Boolean),
  profileDir: flags.profile,
  relayNodes: (flags['relay-node'] ?? '').split(',').filter(Boolean),
  // A list (kafkajs,platformatic) compares the clients side by side: compareVariants runs one bench per client.
  kafkaClient: flags['kafka-client']?.includes(',') ? 'kafkajs' : (flags['kafka-client'] ?? 'kafkajs'),
  compare: flags.compare as Peer | undefined,
  debeziumJavaOpts: (flags['debezium-java-opts'] ?? '').split(/\s+/).filter(Boolean),
  debeziumProps: Object.fromEntries((flags['debezium-prop'] ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) as Record<
    string,
    string
  >,
};
if (opts.compare !== undefined && !['debezium', 'conduit'].includes(opts.compare)) throw new Error('--compare must be debezium or conduit');
if (flags['conduit-pipeline'] !== undefined && opts.compare !== 'conduit') throw new Error('--conduit-pipeline goes with --compare conduit');
/** The relay compared with outbox-tail, if any. */
const PEER: Peer | null = opts.compare ?? null;
/** The peer's name in progress lines and tables. */
const PEER_LABEL = PEER === 'conduit' ? 'Conduit' : 'Debezium';
// Debezium's JVM compiles its hot paths during the first seconds: latency measured earlier is its JIT's.
// Conduit (Go) needs no such warm-up, but gets the same, so that both peers are measured alike.
if (opts.compare && flags['warmup-seconds'] === undefined) opts.warmupSeconds = 10;
/**
 * With --compare, every relay is timed until its slot confirmed the commit of
 * the last transaction written (lastCommitEndLsn), the one position both
 * relays confirm; otherwise until it confirmed the WAL end as before.
 */
const TIME_TO_LAST_COMMIT = opts.compare !== undefined;
if (flags['compare-first'] !== undefined && !['outbox-tail', PEER ?? 'debezium'].includes(flags['compare-first']))
  throw new Error(`--compare-first must be outbox-tail or ${PEER ?? 'debezium'}`);
/** Who goes first matters a little (page cache, the broker's log segments): run both orders to see how much. */
const PEER_FIRST = PEER !== null && flags['compare-first'] === PEER;
/** Catch-up rounds of a comparison: a first run on a cold broker or page cache and the order of the relays both moved the ratio by about 20%. */
const COMPARE_ROUNDS = flags['compare-rounds'] === undefined ? 2 : Number(flags['compare-rounds']);
if (!Number.isInteger(COMPARE_ROUNDS) || COMPARE_ROUNDS < 1) throw new Error('--compare-rounds must be a positive integer');
/** The codecs of --compression none,gzip,..., each benched in a run of its own. */
const COMPRESSIONS_BENCHED = (flags.compression ?? 'none').split(',').filter(Boolean);
for (const c of COMPRESSIONS_BENCHED)
  if (!['none', 'gzip', 'snappy', 'lz4', 'zstd'].includes(c))
    throw new Error('--compression must be none, gzip, snappy, lz4, zstd, or several comma separated');
/** The clients of --kafka-client kafkajs,platformatic, each benched in a run of its own. */
const KAFKA_CLIENTS = (flags['kafka-client'] ?? 'kafkajs').split(',').filter(Boolean);
for (const c of KAFKA_CLIENTS)
  if (!['kafkajs', 'platformatic'].includes(c)) throw new Error('--kafka-client must be kafkajs, platformatic, or both comma separated');
if ([KAFKA_CLIENTS.length > 1, opts.relayNodes.length > 1, COMPRESSIONS_BENCHED.length > 1].filter(Boolean).length > 1)
  throw new Error('compare one axis at a time: --relay-node with several runtimes, --kafka-client kafkajs,platformatic or --compression with several codecs');
type Delivery = 'at-least-once' | 'exactly-once';
const DELIVERIES: readonly Delivery[] = ['at-least-once', 'exactly-once'];
const deliveryFlag = flags.delivery ?? 'at-least-once';
if (![...DELIVERIES, 'both'].includes(deliveryFlag)) throw new Error('--delivery must be at-least-once, exactly-once or both');
const firstDelivery = (flags['first-delivery'] ?? 'at-least-once') as Delivery;
if (!DELIVERIES.includes(firstDelivery)) throw new Error('--first-delivery must be at-least-once or exactly-once');
/** The delivery modes of the relay scenarios, in the order of the first scenario. */
const MODES: readonly Delivery[] =
  deliveryFlag === 'both'
    ? firstDelivery === 'exactly-once'
      ? ['exactly-once', 'at-least-once']
      : ['at-least-once', 'exactly-once']
    : [deliveryFlag as Delivery];
if (MODES.includes('exactly-once') && opts.kafkaClient !== 'kafkajs') throw new Error('exactly-once delivery runs on the kafkajs client only');
// Debezium Server and Conduit deliver at least once: each is compared with the at-least-once relay only (with --delivery both, beside that run).
if (opts.compare && !MODES.includes('at-least-once'))
  throw new Error(`--compare ${opts.compare} compares with the at-least-once relay: use --delivery at-least-once or both`);
let scenarioRound = 0;
/** The modes for the next relay scenario: the one that goes first alternates, so neither always runs on a warmer machine. */
const nextModes = (): readonly Delivery[] => (scenarioRound++ % 2 === 0 ? MODES : [...MODES].reverse());
/** An exactly-once relay publishes to topics of its own, so both modes can read one backlog. */
const topicFor = (mode: Delivery, type: string) => (mode === 'exactly-once' ? `outbox.eos.${type}` : `outbox.event.${type}`);
opts.relayEnv.OUTBOX_TAIL_KAFKA_CLIENT ??= opts.kafkaClient;
if (COMPRESSIONS_BENCHED.length === 1) opts.relayEnv.OUTBOX_TAIL_COMPRESSION ??= COMPRESSIONS_BENCHED[0]!;
for (const s of opts.scenarios) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}; use ${SCENARIOS.join(',')}`);
for (const [k, v] of [
  ['events', opts.events],
  ['big-rows', opts.bigRows],
  ['steady-seconds', opts.steadySeconds],
  ['write-seconds', opts.writeSeconds],
  ['write-concurrency', opts.writeConcurrency],
  ['write-rounds', opts.writeRounds],
  ['partitions', opts.partitions],
] as const) {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${k} must be a positive number`);
}
for (const n of opts.shards)
  if (!Number.isInteger(n) || n < 1 || n > MAX_SHARDS) throw new Error(`--shards must list whole numbers 1-${MAX_SHARDS}, comma separated`);
if (!Number.isFinite(opts.shardRate) || opts.shardRate < 0) throw new Error('--shard-rate must be 0 (none) or a rate per second');
// The relay's batch settings (its defaults unless --relay-env sets them), also used by the Kafka limit and the polling baseline.
const configDefaults = configSchema.parse({});
const BATCH_MAX_MESSAGES = Number(opts.relayEnv.OUTBOX_TAIL_BATCH_MAX_MESSAGES ?? configDefaults.batchMaxMessages);
const BATCH_MAX_BYTES = Number(opts.relayEnv.OUTBOX_TAIL_BATCH_MAX_BYTES ?? configDefaults.batchMaxBytes);

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------- context

interface Ctx {
  db: BenchDatabase;
  brokers: string[];
  kafka: Kafka;
  admin: Admin;
  pg: pg.Client;
  runId: string;
  /** The compacted watermark topic of the exactly-once relays (one per run). */
  offsetsTopic: string;
  /** The Kafka broker's pid when the bench started the stack itself (for CPU accounting), else undefined. */
  brokerPid(): number | undefined;
}

function relayNodeArgs(name: string): string[] {
  const out = [...opts.nodeArgs];
  if (opts.profileDir) {
    // One folder per process: a process with a loader thread (tsx) writes one profile per thread.
    const dir = `${opts.profileDir}/${name}-${Date.now().toString(36)}`;
    mkdirSync(dir, { recursive: true });
    out.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  return out;
}

function deliveryEnv(ctx: Ctx, mode: Delivery): Record<string, string> {
  if (mode === 'at-least-once') return {};
  // The transactional id is the default, outbox-tail-<slot>: one per bench slot.
  return { OUTBOX_TAIL_DELIVERY: 'exactly-once', OUTBOX_TAIL_OFFSETS_TOPIC: ctx.offsetsTopic, OUTBOX_TAIL_TOPIC: 'outbox.eos.{aggregate_type}' };
}

function spawnRelay(
  ctx: Ctx,
  name: string,
  slot: string,
  kind: 'relay' | 'null-sink',
  mode: Delivery = 'at-least-once',
  extraEnv: Record<string, string> = {},
): BenchProcess {
  const env = relayEnv({ databaseUrl: ctx.db.url, brokers: ctx.brokers, slot, extra: { ...opts.relayEnv, ...deliveryEnv(ctx, mode), ...extraEnv } });
  const node = RELAY_NODE !== undefined ? { node: RELAY_NODE } : {};
  if (kind === 'relay') return spawnNode({ name, nodeArgs: relayNodeArgs(name), script: RELAY_BIN, env, ...node });
  return spawnNode({ name, nodeArgs: ['--import', 'tsx', ...relayNodeArgs(name)], script: `${ROOT}dev/bench/null-sink-relay.ts`, env, ...node });
}

/**
 * Polls (50 ms) until the topic holds `records` records (if given) and the slot confirmed `endLsn`. Returns the time
 * both held, and (with a topic) the time the records alone first did.
 */
async function waitDone(
  ctx: Ctx,
  what: string,
  target: { topic?: string; records?: number; slot?: string; endLsn?: Lsn; timeoutMs: number; proc?: BenchProcess },
): Promise<{ doneAt: number; records: number; recordsAt?: number }> {
  const deadline = Date.now() + target.timeoutMs;
  let records = 0;
  let recordsAt: number | undefined;
  let kafkaDone = target.topic === undefined;
  let confirmDone = target.slot === undefined;
  let exited = false;
  void target.proc?.exited.then(() => (exited = true));
  let lastReport = Date.now();
  for (;;) {
    if (!kafkaDone) {
      records = await recordCount(ctx.admin, target.topic!);
      kafkaDone = records >= target.records!;
      if (kafkaDone) recordsAt = nowMs();
    }
    if (!confirmDone) confirmDone = (await confirmedFlushLsn(ctx.pg, target.slot!)) >= target.endLsn!;
    if (kafkaDone && confirmDone) return { doneAt: nowMs(), records, ...(recordsAt !== undefined ? { recordsAt } : {}) };
    if (exited) throw new Error(`${what}: ${target.proc!.name} exited before it finished; stderr: ${target.proc!.stderr().slice(-2000)}`);
    if (Date.now() > deadline)
      throw new Error(`${what}: not done within ${target.timeoutMs} ms (records ${records}/${target.records ?? '-'}, confirmed ${confirmDone})`);
    if (Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      log(`  ${what}: ${target.topic ? `${records}/${target.records} records in Kafka` : ''}${confirmDone ? ', confirmed' : ''}`);
    }
    await sleep(50);
  }
}

/** Wall-clock ms of a relay log line (pino's ISO `time`). */
function logTime(line: LogLine): number {
  const t = typeof line.time === 'number' ? line.time : Date.parse(String(line.time));
  if (!Number.isFinite(t)) throw new Error(`log line without a time: ${JSON.stringify(line)}`);
  return t;
}

/** Exactly-once: what a Kafka transaction carried and what its commit cost, from the relay's /metrics. */
function txnLine(sends: RelaySends | null): string {
  const t = sends?.kafka_transactions;
  if (!t) return '';
  return `; ${t.commits} Kafka transactions: ${t.pg_transactions_per_commit} PostgreSQL transactions, ${t.records_per_commit} records, ${t.requests_per_commit} produce requests each; commit (watermark + EndTxn) ${t.commit_mean_ms} ms mean, ${Math.round(t.commit_over_5ms * 100)}% > 5 ms, ${Math.round(t.commit_over_10ms * 100)}% > 10 ms`;
}

function cpuLine(w: CpuWindow, publisher = 'relay'): string {
  const u = w.us_per_event;
  const f = (x: number | null) => (x === null ? '-' : `${x} us`);
  const main = publisher === 'relay' ? ` (main thread ${f(w.relay_main_thread_us_per_event)})` : '';
  return `CPU per event: ${publisher} ${f(u.relay)}${main}, walsender ${f(u.walsender)}, broker ${f(u.broker)}, other ${f(u.other)}; machine ${w.machine_busy_cores ?? '-'} of ${w.cores} cores busy`;
}

const catchupTimeout = (events: number) => Math.max(180_000, events * 2);

// ---------------------------------------------------------------- scenarios

interface CatchupResult {
  events: number;
  seconds: number;
  events_per_sec: number;
  /** events / (seconds - startup_seconds): the rate once it streams, without the process's start-up. */
  events_per_sec_after_startup: number;
  peak_rss_mb: number;
  /** Node start, preflight, connections: spawn until the relay logged "streaming". */
  startup_seconds: number;
  /**
   * Spawn until every record was in Kafka, the slot's confirm aside (at least once: not with exactly-once,
   * whose records count only once committed). The same as `seconds` give or take a poll for a relay that
   * confirms as it goes; Conduit confirms every 10 s.
   */
  kafka_seconds?: number;
  /** CPU time of the relay process (user + system), startup included. */
  relay_cpu_seconds: number;
  records_in_kafka: number;
  /** From "streaming" to done: CPU per event of the relay, its walsender, the broker and the rest, and the machine's busy cores. */
  cpu: CpuWindow;
  delivery: Delivery;
  /** The relay's own view from its /metrics: produce requests and, in exactly-once mode, Kafka transactions. */
  relay_sends: RelaySends | null;
  /** The machine's 1-minute load average when the scenario ended (the bench itself adds about 2). */
  loadavg_1m: number;
  /** The relay's RSS every 250 ms: [seconds since spawn, MB] (--plot draws it). */
  rss_mb_over_time: Array<[number, number]>;
  /** The topic's bytes on the broker grown by this run, per event (its --compression's effect; batch headers and markers included). */
  broker_bytes_per_event: number | null;
}

/** A publisher process that reads the slot: streamingAt is the wall clock (ms) when it said it does. */
interface Started {
  proc: BenchProcess;
  streamingAt: number;
}
/** `mode` is the relay's delivery; a publisher with one mode only (Debezium Server: at-least-once) ignores it. */
type StartPublisher = (ctx: Ctx, name: string, slot: string, mode: Delivery) => Promise<Started>;

async function started(proc: BenchProcess, streamingAt: (p: BenchProcess) => Promise<number>): Promise<Started> {
  try {
    return { proc, streamingAt: await streamingAt(proc) };
  } catch (error) {
    await proc.stop();
    throw error;
  }
}

/** outbox-tail: pino's `time` (ISO) is the wall clock of the relay's "streaming" line. */
const startOutboxTail: StartPublisher = (ctx, name, slot, mode) =>
  started(spawnRelay(ctx, name, slot, 'relay', mode), async (p) => logTime(await p.waitForLog(isStreaming)));

/** outbox-tail with OUTBOX_TAIL_* settings of its own (write_side: --source messages). */
const startOutboxTailWith =
  (env: Record<string, string>): StartPublisher =>
  (ctx, name, slot, mode) =>
    started(spawnRelay(ctx, name, slot, 'relay', mode, env), async (p) => logTime(await p.waitForLog(isStreaming)));

/**
 * Debezium Server: its text log's time has no zone, so the line's arrival
 * is taken instead (Quarkus writes the console synchronously, line by line).
 * Its JVM takes seconds to get there, hence the longer wait. It delivers at
 * least once only, to the at-least-once topics: the mode is not its to choose.
 */
const startDebezium: StartPublisher = async (ctx, name, slot) =>
  started(
    await spawnDebezium(debezium!, { name, databaseUrl: ctx.db.url, brokers: ctx.brokers, slot, javaOpts: opts.debeziumJavaOpts, props: opts.debeziumProps }),
    async (p) => {
      try {
        await p.waitForLog(isDebeziumStreaming, 180_000);
      } catch (error) {
        // The tail of a Java failure is its stack; the cause is in the ERROR lines before it.
        const errors = p.logs.filter((l) => typeof l.msg === 'string' && /\bERROR\b|Caused by/.test(l.msg)).map((l) => l.msg);
        throw new Error(`${(error as Error).message}\nDebezium's errors:\n${errors.slice(0, 10).join('\n')}`, { cause: error });
      }
      return nowMs();
    },
  );

/** Set by main() when --compare debezium is given. */
let debezium: DebeziumInstall | null = null;

/**
 * Conduit: its JSON log's `time` (Unix ms) is the wall clock of the source's
 * "Logical replication started" line. It delivers at least once, to the
 * at-least-once topics (its pipeline file names outbox.event.<aggregate_type>).
 */
const startConduit: StartPublisher = async (ctx, name, slot) =>
  started(spawnConduit(conduit!, { name, databaseUrl: ctx.db.url, brokers: ctx.brokers, slot, pipeline: flags['conduit-pipeline'] }), async (p) => {
    try {
      return logTime(await p.waitForLog(isConduitStreaming, 120_000));
    } catch (error) {
      throw new Error(`${(error as Error).message}\nConduit's errors:\n${conduitErrors(p).slice(0, 10).join('\n')}`, { cause: error });
    }
  });

/** Set by main() when --compare conduit is given. */
let conduit: ConduitInstall | null = null;

/** The peer's publisher, for --compare. */
const startPeer: StartPublisher = (...args) => (PEER === 'conduit' ? startConduit : startDebezium)(...args);

/**
 * A backlog already in `slot`: spawn the relay (outbox-tail unless `start`
 * says otherwise), time until every record is in Kafka (`baseRecords` were
 * there before: a second relay on the same topic) and the slot confirmed the end.
 * In exactly-once mode the slot's confirm alone says it (it follows the Kafka
 * commit; the topic's end offsets also count commit markers), and the records
 * are counted read_committed after.
 */
async function relayCatchup(
  ctx: Ctx,
  name: string,
  slot: string,
  type: string,
  events: number,
  endLsn: Lsn,
  mode: Delivery,
  start: StartPublisher = startOutboxTail,
  baseRecords = 0,
): Promise<CatchupResult> {
  const topic = topicFor(mode, type);
  const bytesBefore = await brokerBytes(ctx, topic);
  const { proc: relay, streamingAt } = await start(ctx, name, slot, mode);
  try {
    const window = cpuWindow({ relay: relay.pid, walsender: await walsenderPid(ctx.pg, slot), broker: ctx.brokerPid() });
    const startedAtMs = performance.timeOrigin + relay.startedAt;
    const startupSeconds = (streamingAt - startedAtMs) / 1000;
    const target = mode === 'exactly-once' ? { slot, endLsn } : { topic, records: baseRecords + events, slot, endLsn };
    const done = await waitDone(ctx, name, { ...target, timeoutMs: catchupTimeout(events), proc: relay });
    const cpuSplit = window(events);
    const seconds = (done.doneAt - startedAtMs) / 1000;
    const kafkaSeconds = done.recordsAt !== undefined ? round((done.recordsAt - startedAtMs) / 1000, 2) : undefined;
    const sends = await relaySends(relay);
    const cpu = relay.cpuSeconds();
    await relay.stop();
    const records = mode === 'exactly-once' ? (await readAppendTimes(ctx.kafka, topic, baseRecords + events)).records : done.records;
    const bytesAfter = await brokerBytes(ctx, topic);
    return {
      events,
      seconds: round(seconds, 2),
      events_per_sec: Math.round(events / seconds),
      events_per_sec_after_startup: Math.round(events / (seconds - startupSeconds)),
      peak_rss_mb: Math.round(relay.peakRssMb()),
      startup_seconds: round(startupSeconds, 2),
      ...(kafkaSeconds !== undefined ? { kafka_seconds: kafkaSeconds } : {}),
      relay_cpu_seconds: round(cpu, 2),
      records_in_kafka: records - baseRecords,
      cpu: cpuSplit,
      delivery: mode,
      relay_sends: sends,
      loadavg_1m: round(loadavg()[0]!, 2),
      rss_mb_over_time: relay.rssSeries(),
      broker_bytes_per_event: bytesBefore !== null && bytesAfter !== null ? round((bytesAfter - bytesBefore) / events, 1) : null,
    };
  } finally {
    await relay.stop();
  }
}

/** The topic's bytes on the broker (Kafka's LogDirsCommand), or null (logged) where the broker's jars are not here. */
async function brokerBytes(ctx: Ctx, topic: string): Promise<number | null> {
  try {
    return (await topicBytes(ctx.brokers, [topic])).get(topic) ?? 0;
  } catch (error) {
    log(`  bytes on the broker not measured: ${(error as Error).message.split('\n')[0]}`);
    return null;
  }
}

interface Backlog {
  type: string;
  topic: string;
  slots: string[];
  endLsn: Lsn;
}

/** Where a relay is done once its slot confirmed it: see TIME_TO_LAST_COMMIT. */
function endLsnOf(ctx: Ctx, table: string, type: string): Promise<Lsn> {
  return TIME_TO_LAST_COMMIT ? lastCommitEndLsn(ctx.pg, table, type) : currentWalLsn(ctx.pg);
}

/**
 * After a backlog is written: its WAL (~300 MB at 200,000 rows) would start a
 * checkpoint inside the first relay's catch-up only (with two delivery modes,
 * or two relays, on one backlog, whichever goes first would pay for it).
 * Likewise autovacuum, which 200,000 inserts trigger
 * (autovacuum_vacuum_insert_threshold) and which would otherwise run beside
 * the first relay: vacuumed now, with the checkpoint after it.
 */
async function settleBacklog(ctx: Ctx): Promise<void> {
  await ctx.pg.query('checkpoint');
  await ctx.pg.query('vacuum (analyze) outbox');
  await ctx.pg.query('checkpoint');
}

async function prepareBacklog(ctx: Ctx, label: string, events: number, perTxn: number, slots: number): Promise<Backlog> {
  const type = `bench_${label}_${ctx.runId}`;
  const topic = `outbox.event.${type}`;
  await createTopic(ctx.admin, topic, opts.partitions);
  if (MODES.includes('exactly-once')) await createTopic(ctx.admin, topicFor('exactly-once', type), opts.partitions);
  const names: string[] = [];
  for (let i = 0; i < slots; i++) {
    const slot = `${type}_${i}`.slice(0, 63);
    await createSlot(ctx.db.url, slot);
    names.push(slot);
  }
  const t0 = Date.now();
  await insertBacklog(ctx.db.url, 'outbox', type, events, perTxn);
  const endLsn = await endLsnOf(ctx, 'outbox', type);
  await settleBacklog(ctx);
  log(
    `  backlog: ${events} rows in ${perTxn === 1 ? 'single-row' : `${perTxn}-row`} transactions written in ${((Date.now() - t0) / 1000).toFixed(1)} s (end LSN ${Lsn.format(endLsn)})`,
  );
  return { type, topic, slots: names, endLsn };
}

async function decodeLimit(
  ctx: Ctx,
  backlog: Backlog,
  slot: string,
  events: number,
): Promise<{ events_per_sec: number; seconds: number; cpu_seconds: number; cpu: CpuWindow }> {
  const proc = spawnRelay(ctx, 'decode-limit', slot, 'null-sink');
  try {
    // Timed from "streaming" (not from spawn): a stricter ceiling than the catch-up's own clock.
    const streamingAt = logTime(await proc.waitForLog(isStreaming));
    const window = cpuWindow({ relay: proc.pid, walsender: await walsenderPid(ctx.pg, slot), broker: ctx.brokerPid() });
    const { doneAt } = await waitDone(ctx, 'decode limit', { slot, endLsn: backlog.endLsn, timeoutMs: catchupTimeout(events), proc });
    const cpuSplit = window(events);
    const cpu = proc.cpuSeconds();
    await proc.stop();
    const summary = proc.logs.find((l) => l.event === 'null-sink') as { records?: number } | undefined;
    if (summary?.records !== undefined && summary.records !== events) log(`  warning: the null sink saw ${summary.records} records, expected ${events}`);
    const seconds = (doneAt - streamingAt) / 1000;
    return { events_per_sec: Math.round(events / seconds), seconds: round(seconds, 2), cpu_seconds: round(cpu, 2), cpu: cpuSplit };
  } finally {
    await proc.stop();
  }
}

async function kafkaLimit(
  ctx: Ctx,
  backlog: Backlog,
  events: number,
): Promise<{ events_per_sec: number; seconds: number; client_us_per_event: number; broker_us_per_event: number | null }> {
  const topic = `${backlog.topic}_kafka_limit`;
  await createTopic(ctx.admin, topic, opts.partitions);
  const proc = spawnNode({
    name: 'kafka-limit',
    nodeArgs: ['--import', 'tsx'],
    script: `${ROOT}dev/bench/kafka-limit.ts`,
    env: {
      BENCH_ARGS: JSON.stringify({
        databaseUrl: ctx.db.url,
        brokers: ctx.brokers,
        aggregateType: backlog.type,
        table: 'public.outbox',
        topic,
        batchMaxMessages: BATCH_MAX_MESSAGES,
        batchMaxBytes: BATCH_MAX_BYTES,
        kafkaClient: opts.kafkaClient,
      }),
    },
  });
  // The broker is idle while the helper loads its records, so a window over the whole process is the broker's cost of the sends.
  const broker0 = processCpuSeconds(ctx.brokerPid());
  const line = (await proc.waitForLog((l) => l.event === 'kafka-limit', catchupTimeout(events))) as unknown as {
    events: number;
    seconds: number;
    cpuSeconds: number;
  };
  const broker1 = processCpuSeconds(ctx.brokerPid());
  await proc.exited;
  const inKafka = await recordCount(ctx.admin, topic);
  if (line.events !== events || inKafka !== events) log(`  warning: Kafka limit sent ${line.events} records, topic holds ${inKafka}, expected ${events}`);
  return {
    events_per_sec: Math.round(line.events / line.seconds),
    seconds: round(line.seconds, 2),
    client_us_per_event: round((line.cpuSeconds * 1e6) / line.events),
    broker_us_per_event: broker0 === null || broker1 === null ? null : round(((broker1 - broker0) * 1e6) / line.events),
  };
}

/** kafka-producer-perf-test (dev/bench/perf-test-limit.ts) with records as long as the backlog's, to a topic of its own. */
async function perfTestLimit(ctx: Ctx, backlog: Backlog, events: number): Promise<PerfTestLimit> {
  const topic = `${backlog.topic}_perf_test`;
  await createTopic(ctx.admin, topic, opts.partitions);
  const record = await outboxRecordSize(ctx.db.url, 'public.outbox', backlog.type, backlog.topic);
  const r = await producerPerfTest({
    brokers: ctx.brokers,
    topic,
    events,
    record,
    brokerPid: ctx.brokerPid(),
    batchBytes: BATCH_MAX_BYTES,
    timeoutMs: catchupTimeout(events),
  });
  const inKafka = await recordCount(ctx.admin, topic);
  if (inKafka !== events) log(`  warning: kafka-producer-perf-test: the topic holds ${inKafka} records, expected ${events}`);
  log(
    `  Kafka limit (kafka-producer-perf-test, Kafka ${r.kafka_version}, idempotent, acks=all, batch.size ${BATCH_MAX_BYTES}, ${record.perf_test_record_size}-byte values = key ${record.key_bytes} + value ${record.value_bytes} + ${record.header_count} headers ${record.header_bytes} B + prefixes; no key, no headers): ${r.events_per_sec} events/s (${r.seconds} s, ${r.mb_per_sec} MB/s, latency p50 ${r.p50_latency_ms} / p99 ${r.p99_latency_ms} ms); CPU per event: JVM ${r.client_us_per_event ?? '-'} us (start-up included), broker ${r.broker_us_per_event ?? '-'} us`,
  );
  return r;
}

/**
 * Latency per record = its LogAppendTime in Kafka minus the time its
 * autocommit INSERT was sent (an upper bound on commit -> Kafka); the
 * *_from_reply fields use the time the commit's reply arrived (a lower bound).
 */
interface SteadyResult {
  rate: number;
  /** The relay's mode (absent for the polling baseline). */
  delivery?: Delivery;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
  p50_ms_from_reply: number;
  p99_ms_from_reply: number;
  /**
   * p50_ms, p99_ms and max_ms measure until a read_committed consumer may see
   * the record: in exactly-once mode, the append time of the commit marker
   * after it. These measure until its own append (the same in at-least-once mode).
   */
  p50_ms_appended: number;
  p99_ms_appended: number;
  /** The machine's 1-minute load average when the run ended. */
  loadavg_1m?: number;
  records: number;
  achieved_rate: number;
  peak_rss_mb: number;
  /** Over the writer's run: CPU per record of the publisher (relay or poller), walsender, broker, rest (the writer and its backends), and the machine's busy cores. */
  cpu: CpuWindow;
  /** The relay's own view from its /metrics (null for the polling baseline): Kafka produce requests and their duration. */
  relay_sends?: RelaySends | null;
  /** The publisher's RSS every 250 ms: [seconds since spawn, MB] (--plot draws it). */
  rss_mb_over_time: Array<[number, number]>;
}

interface RelaySends {
  /** Batches (produce requests), and records per batch; in exactly-once mode a Kafka transaction's last batch goes with its watermark. */
  requests: number;
  mean_records: number;
  /** Duration of the batches sent alone (not with a watermark: those are in the commit's time). */
  mean_ms: number;
  /** Share of those that took longer than 10 ms and 25 ms (histogram buckets). */
  over_10ms: number;
  over_25ms: number;
  /** The relay's event-loop delay from prom-client's default metrics: sampled every 10 ms, and the values include those 10 ms. */
  event_loop_p99_ms: number;
  event_loop_max_ms: number;
  /** Major (mark-compact) GC pauses during the run and their total. */
  gc_major_count: number;
  gc_major_total_ms: number;
  /** Exactly-once only (null otherwise): Kafka transactions committed with records, and what they carried and cost. */
  kafka_transactions: KafkaTransactions | null;
}

interface KafkaTransactions {
  commits: number;
  /** PostgreSQL transactions per Kafka transaction (mean), records and produce requests per Kafka transaction. */
  pg_transactions_per_commit: number;
  records_per_commit: number;
  requests_per_commit: number;
  /** Watermark produce + EndTxn, per commit (keepalive watermarks included, there are none under load). */
  commit_mean_ms: number;
  commit_over_5ms: number;
  commit_over_10ms: number;
  commit_over_25ms: number;
}

/** Reads the Kafka send histogram of a running relay from its /metrics endpoint. */
async function relaySends(proc: BenchProcess): Promise<RelaySends | null> {
  const listening = proc.logs.find((l) => l.event === 'metrics-listening') as { address?: string } | undefined;
  if (!listening?.address) return null;
  try {
    const text = await (await fetch(`http://${listening.address}/metrics`)).text();
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
    const count = value(/^outbox_tail_kafka_send_duration_seconds_count\{outcome="ok"\} (\S+)$/m);
    const sum = value(/^outbox_tail_kafka_send_duration_seconds_sum\{outcome="ok"\} (\S+)$/m);
    const under = (le: string) => value(new RegExp(`^outbox_tail_kafka_send_duration_seconds_bucket\\{le="${le}",outcome="ok"\\} (\\S+)$`, 'm'));
    const records = value(/^outbox_tail_batch_records_sum (\S+)$/m);
    // Batches: sent alone (the send histogram) or, in exactly-once mode, with a commit's watermark.
    const batches = value(/^outbox_tail_batch_records_count (\S+)$/m);
    if (!(batches > 0)) return null;
    const commits = value(/^outbox_tail_kafka_transactions_total (\S+)$/m);
    const commitCount = value(/^outbox_tail_kafka_commit_duration_seconds_count\{outcome="ok"\} (\S+)$/m);
    const commitSum = value(/^outbox_tail_kafka_commit_duration_seconds_sum\{outcome="ok"\} (\S+)$/m);
    const commitUnder = (le: string) => value(new RegExp(`^outbox_tail_kafka_commit_duration_seconds_bucket\\{le="${le}",outcome="ok"\\} (\\S+)$`, 'm'));
    const kafkaTransactions: KafkaTransactions | null =
      commits > 0
        ? {
            commits,
            pg_transactions_per_commit: round(value(/^outbox_tail_kafka_transaction_pg_transactions_total (\S+)$/m) / commits, 2),
            records_per_commit: round(records / commits, 1),
            requests_per_commit: round(batches / commits, 2),
            commit_mean_ms: round((commitSum / commitCount) * 1000, 2),
            commit_over_5ms: round(1 - commitUnder('0.005') / commitCount, 3),
            commit_over_10ms: round(1 - commitUnder('0.01') / commitCount, 3),
            commit_over_25ms: round(1 - commitUnder('0.025') / commitCount, 3),
          }
        : null;
    return {
      requests: batches,
      mean_records: round(records / batches),
      mean_ms: count > 0 ? round((sum / count) * 1000, 2) : 0,
      over_10ms: count > 0 ? round(1 - under('0.01') / count, 3) : 0,
      over_25ms: count > 0 ? round(1 - under('0.025') / count, 3) : 0,
      event_loop_p99_ms: round(value(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m) * 1000, 1),
      event_loop_max_ms: round(value(/^nodejs_eventloop_lag_max_seconds (\S+)$/m) * 1000, 1),
      gc_major_count: value(/^nodejs_gc_duration_seconds_count\{kind="major"\} (\S+)$/m) || 0,
      gc_major_total_ms: round((value(/^nodejs_gc_duration_seconds_sum\{kind="major"\} (\S+)$/m) || 0) * 1000, 1),
      kafka_transactions: kafkaTransactions,
    };
  } catch {
    return null;
  }
}

function latencyStats(
  rate: number,
  writer: WriterResult,
  visible: Map<string, number>,
  appended: Map<string, number>,
): Omit<SteadyResult, 'peak_rss_mb' | 'cpu' | 'rss_mb_over_time'> {
  const fromSent: number[] = [];
  const fromReply: number[] = [];
  const fromSentAppended: number[] = [];
  let missing = 0;
  for (const [id, sentAt] of writer.commitTimes) {
    const t = visible.get(id);
    if (t === undefined) {
      missing++;
      continue;
    }
    fromSent.push(t - sentAt);
    fromReply.push(t - writer.replyTimes.get(id)!);
    fromSentAppended.push(appended.get(id)! - sentAt);
  }
  if (missing > 0) throw new Error(`${missing} of ${writer.commitTimes.size} written records were not found in Kafka`);
  fromSent.sort((a, b) => a - b);
  fromReply.sort((a, b) => a - b);
  fromSentAppended.sort((a, b) => a - b);
  return {
    rate,
    p50_ms: round(percentile(fromSent, 50)),
    p99_ms: round(percentile(fromSent, 99)),
    p999_ms: round(percentile(fromSent, 99.9)),
    max_ms: round(fromSent[fromSent.length - 1] ?? NaN),
    p50_ms_from_reply: round(percentile(fromReply, 50)),
    p99_ms_from_reply: round(percentile(fromReply, 99)),
    p50_ms_appended: round(percentile(fromSentAppended, 50)),
    p99_ms_appended: round(percentile(fromSentAppended, 99)),
    records: fromSent.length,
    achieved_rate: Math.round(writer.measured / (writer.seconds - opts.warmupSeconds)),
  };
}

function dumpLatency(file: string, writer: WriterResult, times: Map<string, number>): void {
  let t0 = Infinity;
  for (const sentAt of writer.commitTimes.values()) t0 = Math.min(t0, sentAt);
  const rows: Array<[number, number]> = [];
  for (const [id, sentAt] of writer.commitTimes) {
    const t = times.get(id);
    if (t !== undefined) rows.push([round(sentAt - t0, 1), round(t - sentAt, 1)]);
  }
  rows.sort((a, b) => a[0] - b[0]);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(rows));
  log(`  latencies written to ${file}`);
}

/**
 * Starts a steady run on a quiet database: the catch-up backlogs leave
 * hundreds of MB of WAL and rows behind, and the checkpoint and autovacuum
 * they trigger would otherwise land inside the measured window of whichever
 * scenario comes next (seen as p99 spikes of 40-70 ms at 5,000/s that an
 * isolated steady run does not have).
 */
async function quiesce(ctx: Ctx, table: string): Promise<void> {
  await ctx.pg.query(`truncate ${table}`);
  await ctx.pg.query('checkpoint');
}

/** Steady writer at `rate` against a running publisher (the relay or the polling baseline). */
async function steady(
  ctx: Ctx,
  label: string,
  rate: number,
  table: string,
  start: (type: string, topic: string) => Promise<{ proc: BenchProcess; slot?: string }>,
  mode?: Delivery,
  /** How a record in Kafka is tied to the row the writer wrote: see readAppendTimes. */
  identity: RecordIdentity = 'id-header',
): Promise<SteadyResult> {
  const type = `bench_${label}_${rate}_${ctx.runId}`;
  const topic = mode ? topicFor(mode, type) : `outbox.event.${type}`;
  await createTopic(ctx.admin, topic, opts.partitions);
  await quiesce(ctx, table);
  const { proc, slot } = await start(type, topic);
  try {
    log(`  ${label} ${rate}/s: writing for ${opts.warmupSeconds} s warm-up + ${opts.steadySeconds} s`);
    const window = cpuWindow({ relay: proc.pid, walsender: slot ? await walsenderPid(ctx.pg, slot) : null, broker: ctx.brokerPid() });
    const writer = await runWriter({ url: ctx.db.url, table, aggregateType: type, rate, seconds: opts.steadySeconds, warmupSeconds: opts.warmupSeconds });
    const endLsn = slot ? await endLsnOf(ctx, table, type) : null;
    await waitDone(ctx, `${label} ${rate}/s`, { topic, records: writer.written, ...(slot && endLsn ? { slot, endLsn } : {}), timeoutMs: 120_000, proc });
    const cpu = window(writer.written);
    const sends = slot ? await relaySends(proc) : null;
    const peak = proc.peakRssMb();
    await proc.stop();
    const { times, visible } = await readAppendTimes(
      ctx.kafka,
      topic,
      writer.written,
      undefined,
      identity === 'payload-order-id' ? writer.idOfOrder : undefined,
    );
    if (flags['dump-latency']) dumpLatency(`${flags['dump-latency']}/${label}-${rate}.json`, writer, visible);
    const stats = latencyStats(rate, writer, visible, times);
    // A writer that could not keep the rate (a loaded machine) measured a different load: say so next to the figure.
    if (stats.achieved_rate < 0.95 * rate) log(`  warning: ${label} ${rate}/s: the writer reached only ${stats.achieved_rate}/s`);
    return {
      ...(mode ? { delivery: mode } : {}),
      ...stats,
      peak_rss_mb: Math.round(peak),
      cpu,
      loadavg_1m: round(loadavg()[0]!, 2),
      rss_mb_over_time: proc.rssSeries(),
      ...(slot ? { relay_sends: sends } : {}),
    };
  } finally {
    await proc.stop();
    if (slot) await dropSlot(ctx.db.url, slot);
  }
}

/** Kafka's side of the steady latency at `rate`: dev/bench/kafka-latency-floor.ts while the writer writes the same rate (no relay, no slot). */
interface SteadyFloor {
  rate: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
  records: number;
  requests: number;
  writer_rate: number;
  client_us_per_event: number;
  loadavg_1m: number;
}

async function steadyFloor(ctx: Ctx, rate: number): Promise<SteadyFloor> {
  const type = `bench_floor_${rate}_${ctx.runId}`;
  const topic = `outbox.event.${type}`;
  await createTopic(ctx.admin, topic, opts.partitions);
  await quiesce(ctx, 'public.outbox');
  const proc = spawnNode({
    name: 'kafka-latency-floor',
    // The relay's node flags: the same heap settings behind the same client.
    nodeArgs: ['--import', 'tsx', ...opts.nodeArgs],
    script: `${ROOT}dev/bench/kafka-latency-floor.ts`,
    env: {
      BENCH_ARGS: JSON.stringify({
        databaseUrl: ctx.db.url,
        brokers: ctx.brokers,
        topic,
        rate,
        seconds: opts.steadySeconds,
        warmupSeconds: opts.warmupSeconds,
        batchMaxMessages: BATCH_MAX_MESSAGES,
        batchMaxBytes: BATCH_MAX_BYTES,
        kafkaClient: opts.kafkaClient,
      }),
    },
  });
  try {
    log(`  Kafka floor ${rate}/s: the relay's sink alone at ${rate}/s beside the writer at ${rate}/s (no relay, no slot)`);
    await proc.waitForLog((l) => l.event === 'kafka-latency-floor-ready', 120_000);
    const [writer, line] = await Promise.all([
      runWriter({ url: ctx.db.url, table: 'public.outbox', aggregateType: type, rate, seconds: opts.steadySeconds, warmupSeconds: opts.warmupSeconds }),
      proc.waitForLog((l) => l.event === 'kafka-latency-floor', (opts.warmupSeconds + opts.steadySeconds + 120) * 1000) as unknown as Promise<{
        records: number;
        p50: number;
        p99: number;
        p999: number;
        max: number;
        requests: number;
        cpuSeconds: number;
      }>,
    ]);
    return {
      rate,
      p50_ms: line.p50,
      p99_ms: line.p99,
      p999_ms: line.p999,
      max_ms: line.max,
      records: line.records,
      requests: line.requests,
      writer_rate: Math.round(writer.written / writer.seconds),
      client_us_per_event: round((line.cpuSeconds * 1e6) / line.records),
      loadavg_1m: round(loadavg()[0]!, 2),
    };
  } finally {
    await proc.stop();
  }
}

/** A fresh slot for `type` and a publisher streaming from it (outbox-tail in `mode` unless `start` says otherwise). */
async function startRelayOn(
  ctx: Ctx,
  name: string,
  type: string,
  mode: Delivery,
  start: StartPublisher = startOutboxTail,
): Promise<{ proc: BenchProcess; slot: string }> {
  const slot = `${type}`.slice(0, 63);
  await createSlot(ctx.db.url, slot);
  try {
    const { proc } = await start(ctx, name, slot, mode);
    return { proc, slot };
  } catch (error) {
    await dropSlot(ctx.db.url, slot);
    throw error;
  }
}

function startPolling(ctx: Ctx, topic: string): BenchProcess {
  return spawnNode({
    name: 'polling-publisher',
    nodeArgs: ['--import', 'tsx'],
    script: `${ROOT}dev/bench/polling-publisher.ts`,
    env: {
      BENCH_ARGS: JSON.stringify({
        databaseUrl: ctx.db.url,
        brokers: ctx.brokers,
        table: POLLING_TABLE,
        topic,
        pollRows: Math.min(BATCH_MAX_MESSAGES, 2000),
        pollIntervalMs: opts.pollIntervalMs,
        batchMaxMessages: BATCH_MAX_MESSAGES,
        batchMaxBytes: BATCH_MAX_BYTES,
        kafkaClient: opts.kafkaClient,
      }),
    },
  });
}

interface BigTxnResult {
  rows: number;
  seconds: number;
  peak_rss_mb: number;
  idle_rss_mb: number;
  delivery: Delivery;
  relay_sends: RelaySends | null;
}

async function bigTxn(ctx: Ctx, rows: number, mode: Delivery): Promise<BigTxnResult> {
  const type = `bench_big${mode === 'exactly-once' ? '_eos' : ''}_${ctx.runId}`;
  const topic = topicFor(mode, type);
  await createTopic(ctx.admin, topic, opts.partitions);
  const { proc, slot } = await startRelayOn(ctx, `big-txn-${mode}`, type, mode);
  try {
    const idle = proc.peakRssMb();
    await withClient(ctx.db.url, (c) =>
      c.query(
        `insert into outbox(aggregate_type, aggregate_id, event_type, payload)
         select $1, (g % 10000)::text, 'OrderCreated', ${PAYLOAD_SQL} from generate_series(1, $2::int) g`,
        [type, rows],
      ),
    );
    const committedAt = nowMs();
    const endLsn = await currentWalLsn(ctx.pg);
    // Exactly-once: the confirm follows the Kafka commit (the topic's end offsets also count the commit markers).
    const target = mode === 'exactly-once' ? { slot, endLsn } : { topic, records: rows, slot, endLsn };
    const { doneAt } = await waitDone(ctx, `big transaction (${mode})`, { ...target, timeoutMs: catchupTimeout(rows), proc });
    const sends = await relaySends(proc);
    await proc.stop();
    return {
      rows,
      seconds: round((doneAt - committedAt) / 1000, 2),
      peak_rss_mb: Math.round(proc.peakRssMb()),
      idle_rss_mb: Math.round(idle),
      delivery: mode,
      relay_sends: sends,
    };
  } finally {
    await proc.stop();
    await dropSlot(ctx.db.url, slot);
  }
}

/** One run of one way of writing the order workload (see dev/bench/write-side.ts). */
interface WriteSideRound {
  transactions: number;
  seconds: number;
  /** CPU seconds of the writers' PostgreSQL backends (null off this machine) and of the bench process's clients. */
  backend_cpu_seconds: number | null;
  client_cpu_seconds: number;
  wal_bytes: number;
  outbox_bytes_left: number;
  orders_bytes_left: number;
  catchup: CatchupResult | null;
  loadavg_1m: number;
}

/** One way of writing, over all rounds: sums of the rounds, so each figure is the same time of writing for every variant. */
interface WriteSideResult {
  variant: WriteSideVariant;
  transactions: number;
  seconds: number;
  transactions_per_sec: number;
  /**
   * CPU per transaction of the writers' PostgreSQL backends and of the clients (pg, writeOutboxEvent):
   * what a write costs, which the machine's other load moves far less than transactions/s.
   */
  backend_us_per_txn: number | null;
  client_us_per_txn: number;
  /** pg_current_wal_lsn() after minus before, per transaction (the orders row and, but for `none`, its event). */
  wal_bytes_per_txn: number;
  /** wal_bytes_per_txn minus that of `none` (the orders row alone): what the event costs in WAL. */
  event_wal_bytes: number | null;
  /** pg_total_relation_size growth (heap, indexes, TOAST) of the outbox table over a round, per transaction and of the last round. */
  outbox_bytes_per_txn: number;
  outbox_bytes_left: number;
  orders_bytes_per_txn: number;
  /** The relay (--source table, or messages for message and emit) catching up on what a round wrote, from a slot created before the writes: events over the rounds' seconds. */
  catchup: { events: number; events_per_sec: number; events_per_sec_after_startup: number; peak_rss_mb: number; relay_us_per_event: number | null } | null;
  loadavg_1m: number[];
  rounds: WriteSideRound[];
}

async function writeSideRound(ctx: Ctx, variant: WriteSideVariant, roundNo: number, firstId: number): Promise<WriteSideRound> {
  const size = async (table: string) =>
    Number((await ctx.pg.query<{ n: string }>('select pg_total_relation_size($1::regclass)::text as n', [table])).rows[0]!.n);
  const type = `bench_ws_${variant}_${roundNo}_${ctx.runId}`;
  const topic = `outbox.event.${type}`;
  // The same start for each: empty tables, a fresh checkpoint (its full-page writes hit every run alike).
  await ctx.pg.query(`truncate outbox, ${WRITE_SIDE_ORDERS_TABLE}`);
  await ctx.pg.query('checkpoint');
  const slot = variant === 'none' ? null : type.slice(0, 63);
  if (slot) {
    await createTopic(ctx.admin, topic, opts.partitions);
    await createSlot(ctx.db.url, slot);
  }
  try {
    const outbox0 = await size('outbox');
    const orders0 = await size(WRITE_SIDE_ORDERS_TABLE);
    const lsn0 = await currentWalLsn(ctx.pg);
    const w = await runWriteSide({ url: ctx.db.url, variant, aggregateType: type, seconds: opts.writeSeconds, concurrency: opts.writeConcurrency, firstId });
    const lsn1 = await currentWalLsn(ctx.pg);
    const load = round2(loadavg()[0]!);
    if (w.errors > 0) log(`  warning: write_side ${variant}: ${w.errors} failed transactions`);
    const r: WriteSideRound = {
      transactions: w.transactions,
      seconds: round2(w.seconds),
      backend_cpu_seconds: w.backendCpuSeconds === null ? null : round2(w.backendCpuSeconds),
      client_cpu_seconds: round2(w.clientCpuSeconds),
      wal_bytes: Number(lsn1 - lsn0),
      outbox_bytes_left: (await size('outbox')) - outbox0,
      orders_bytes_left: (await size(WRITE_SIDE_ORDERS_TABLE)) - orders0,
      catchup: null,
      loadavg_1m: load,
    };
    log(
      `  ${variant} (round ${roundNo}): ${r.transactions} transactions in ${r.seconds} s = ${Math.round(r.transactions / r.seconds)}/s, CPU per transaction: backends ${r.backend_cpu_seconds === null ? '-' : `${round((r.backend_cpu_seconds * 1e6) / r.transactions)} us`}, client ${round((r.client_cpu_seconds * 1e6) / r.transactions)} us; ${Math.round(r.wal_bytes / r.transactions)} WAL bytes per transaction, left behind: outbox ${r.outbox_bytes_left} B, orders ${r.orders_bytes_left} B; load ${load}`,
    );
    if (slot) {
      const env: Record<string, string> = variant === 'table' ? {} : { OUTBOX_TAIL_SOURCE: 'messages' };
      r.catchup = await relayCatchup(ctx, `write-side-${variant}`, slot, type, w.transactions, lsn1, 'at-least-once', startOutboxTailWith(env));
      log(
        `    relay --source ${variant === 'table' ? 'table' : 'messages'} catch-up: ${r.catchup.events_per_sec} events/s (${r.catchup.seconds} s incl. ${r.catchup.startup_seconds} s startup), peak RSS ${r.catchup.peak_rss_mb} MB; ${cpuLine(r.catchup.cpu)}`,
      );
    }
    return r;
  } finally {
    if (slot) await dropSlot(ctx.db.url, slot);
  }
}

const round2 = (x: number) => round(x, 2);

/**
 * Every way of writing, `rounds` times, in alternating order (none, table,
 * message, emit, then backwards, ...), so a machine whose load drifts
 * (others' work, a checkpoint) hits each way alike.
 */
async function writeSide(
  ctx: Ctx,
): Promise<{ seconds: number; concurrency: number; rounds: number; settings: Record<string, string>; variants: WriteSideResult[] }> {
  await prepareWriteSide(ctx.pg);
  const byVariant = new Map<WriteSideVariant, WriteSideRound[]>(WRITE_SIDE_VARIANTS.map((v) => [v, []]));
  let firstId = 1;
  for (let k = 1; k <= opts.writeRounds; k++) {
    const order = k % 2 === 1 ? [...WRITE_SIDE_VARIANTS] : [...WRITE_SIDE_VARIANTS].reverse();
    for (const variant of order) {
      const r = await writeSideRound(ctx, variant, k, firstId);
      firstId += r.transactions + 1000;
      byVariant.get(variant)!.push(r);
    }
  }
  const sum = (rs: WriteSideRound[], f: (r: WriteSideRound) => number) => rs.reduce((a, r) => a + f(r), 0);
  const walPerTxn = (rs: WriteSideRound[]) => sum(rs, (r) => r.wal_bytes) / sum(rs, (r) => r.transactions);
  const noneWal = walPerTxn(byVariant.get('none')!);
  const variants = WRITE_SIDE_VARIANTS.map((variant): WriteSideResult => {
    const rs = byVariant.get(variant)!;
    const transactions = sum(rs, (r) => r.transactions);
    const seconds = sum(rs, (r) => r.seconds);
    const caught = rs.map((r) => r.catchup).filter((c): c is CatchupResult => c !== null);
    const catchupSeconds = sum(rs, (r) => r.catchup?.seconds ?? 0);
    const startup = caught.reduce((a, c) => a + c.startup_seconds, 0);
    const relayUs = caught.map((c) => c.cpu.us_per_event.relay);
    return {
      variant,
      transactions,
      seconds: round2(seconds),
      transactions_per_sec: Math.round(transactions / seconds),
      backend_us_per_txn: rs.every((r) => r.backend_cpu_seconds !== null) ? round((sum(rs, (r) => r.backend_cpu_seconds!) * 1e6) / transactions) : null,
      client_us_per_txn: round((sum(rs, (r) => r.client_cpu_seconds) * 1e6) / transactions),
      wal_bytes_per_txn: Math.round(walPerTxn(rs)),
      event_wal_bytes: variant === 'none' ? null : Math.round(walPerTxn(rs) - noneWal),
      outbox_bytes_per_txn: Math.round(sum(rs, (r) => r.outbox_bytes_left) / transactions),
      outbox_bytes_left: rs[rs.length - 1]!.outbox_bytes_left,
      orders_bytes_per_txn: Math.round(sum(rs, (r) => r.orders_bytes_left) / transactions),
      catchup:
        caught.length === 0
          ? null
          : {
              events: transactions,
              events_per_sec: Math.round(transactions / catchupSeconds),
              events_per_sec_after_startup: Math.round(transactions / (catchupSeconds - startup)),
              peak_rss_mb: Math.max(...caught.map((c) => c.peak_rss_mb)),
              relay_us_per_event: relayUs.every((u) => u !== null) ? round(relayUs.reduce((a, u) => a + u!, 0) / relayUs.length) : null,
            },
      loadavg_1m: rs.map((r) => r.loadavg_1m),
      rounds: rs,
    };
  });
  // What the figures depend on: with fsync off, a commit costs CPU, not a flush; without full-page writes, the WAL after a checkpoint holds no page images.
  const settings = Object.fromEntries(
    (
      await ctx.pg.query<{ name: string; setting: string }>(
        `select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_level', 'wal_compression')`,
      )
    ).rows.map((r) => [r.name, r.setting]),
  );
  return { seconds: opts.writeSeconds, concurrency: opts.writeConcurrency, rounds: opts.writeRounds, settings, variants };
}

// ---------------------------------------------------------------- shards

/** A steady writer on the N relays of a shard run, after their catch-up. */
interface ShardSteady {
  rate: number;
  achieved_rate: number;
  records: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
  /** Every relay's peak RSS at the end of the steady run (VmHWM: the catch-up's peak included). */
  relay_peak_rss_mb: number[];
  /** Over the writer's run and until done, per record written: all relays, and each walsender. */
  relay_cpu_us_per_event: number;
  walsender_cpu_us_per_event_per_slot: number | null;
  machine_busy_cores: number | null;
}

interface ShardResult extends ShardCatchupFigures {
  records_in_kafka: number;
  /** This N's catch-up over the first N of --shards. */
  speedup_vs_first: { vs_shards: number; events_per_sec: number; events_per_sec_after_startup: number };
  steady: ShardSteady | null;
  loadavg_1m: number;
}

const execFileAsync = promisify(execFile);
const cpuOf = (p: BenchProcess) => processCpuSeconds(p.pid) ?? p.cpuSeconds();

/** `outbox-tail init --shards N` as an operator runs it: N row-filtered publications and N slots. */
async function initShards(ctx: Ctx, slot: string, publication: string, n: number): Promise<string> {
  const env = relayEnv({ databaseUrl: ctx.db.url, brokers: ctx.brokers, slot });
  const { stdout } = await execFileAsync(
    RELAY_NODE ?? process.execPath,
    [RELAY_BIN, 'init', '--slot', slot, '--publication', publication, '--shards', String(n)],
    { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env } },
  );
  return stdout;
}

/** Each shard slot's walsender, one query at a time (ctx.pg is one connection). */
async function walsenderPids(ctx: Ctx, slots: string[]): Promise<Array<number | null>> {
  const pids: Array<number | null> = [];
  for (const slot of slots) pids.push(await walsenderPid(ctx.pg, slot));
  return pids;
}

/** Polls until `records` are in `topic` and every shard slot confirmed `endLsn`: the time the last of them held. */
async function waitShardsDone(
  ctx: Ctx,
  what: string,
  relays: BenchProcess[],
  slots: string[],
  target: { topic: string; records: number; endLsn: Lsn; timeoutMs: number },
): Promise<{ doneAt: number; records: number }> {
  const { records, doneAt } = await waitDone(ctx, what, { topic: target.topic, records: target.records, timeoutMs: target.timeoutMs, proc: relays[0]! });
  let last = doneAt;
  for (const [i, slot] of slots.entries())
    last = (await waitDone(ctx, `${what}, slot ${slot}`, { slot, endLsn: target.endLsn, timeoutMs: target.timeoutMs, proc: relays[i]! })).doneAt;
  return { doneAt: last, records };
}

async function shardSteady(ctx: Ctx, n: number, relays: BenchProcess[], slots: string[]): Promise<ShardSteady> {
  const rate = opts.shardRate;
  const type = `bench_shards${n}_steady_${ctx.runId}`;
  const topic = `outbox.event.${type}`;
  await createTopic(ctx.admin, topic, opts.partitions);
  // The catch-up's rows out of the way (publish = 'insert': the relays see no TRUNCATE), and a fresh checkpoint.
  await quiesce(ctx, 'outbox');
  log(`  shards ${n} at ${rate}/s: writing for ${opts.warmupSeconds} s warm-up + ${opts.steadySeconds} s`);
  const walsenders = await walsenderPids(ctx, slots);
  const relay0 = relays.map(cpuOf);
  const ws0 = walsenders.map((pid) => processCpuSeconds(pid));
  const machine0 = machineCpuSeconds();
  const t0 = performance.now();
  const writer = await runWriter({
    url: ctx.db.url,
    table: 'outbox',
    aggregateType: type,
    rate,
    seconds: opts.steadySeconds,
    warmupSeconds: opts.warmupSeconds,
  });
  const endLsn = await currentWalLsn(ctx.pg);
  await waitShardsDone(ctx, `shards ${n} at ${rate}/s`, relays, slots, { topic, records: writer.written, endLsn, timeoutMs: 120_000 });
  const relayCpu = relays.reduce((a, r, i) => a + cpuOf(r) - relay0[i]!, 0);
  const ws1 = walsenders.map((pid) => processCpuSeconds(pid));
  const machine1 = machineCpuSeconds();
  const seconds = (performance.now() - t0) / 1000;
  const walsenderCpu = ws0.every((x) => x !== null) && ws1.every((x) => x !== null) ? ws1.reduce((a, x, i) => a + x - ws0[i]!, 0) : null;
  const { times, visible } = await readAppendTimes(ctx.kafka, topic, writer.written);
  const stats = latencyStats(rate, writer, visible, times);
  if (stats.achieved_rate < 0.95 * rate) log(`  warning: shards ${n} at ${rate}/s: the writer reached only ${stats.achieved_rate}/s`);
  return {
    rate,
    achieved_rate: stats.achieved_rate,
    records: stats.records,
    p50_ms: stats.p50_ms,
    p99_ms: stats.p99_ms,
    p999_ms: stats.p999_ms,
    max_ms: stats.max_ms,
    relay_peak_rss_mb: relays.map((r) => Math.round(r.peakRssMb())),
    relay_cpu_us_per_event: usPerEvent(relayCpu, writer.written),
    walsender_cpu_us_per_event_per_slot: walsenderCpu === null ? null : usPerEvent(walsenderCpu / n, writer.written),
    machine_busy_cores: machine0 && machine1 && seconds > 0 ? round((machine1.busy - machine0.busy) / seconds, 2) : null,
  };
}

/**
 * One N of --shards: `init --shards N` on a truncated outbox, --events
 * single-row transactions written before any relay runs (so every shard slot
 * holds the whole backlog's WAL), then N relays (`run --shard i/N`) spawned at
 * once, timed until every record is in Kafka and every shard slot confirmed
 * the end. Then, on the same relays, the steady writer (--shard-rate). The
 * shard slots and publications are dropped at the end.
 */
async function shardRun(ctx: Ctx, n: number, first: ShardResult | undefined): Promise<ShardResult> {
  const events = opts.events;
  const slot = `bench_sh${n}_${ctx.runId}`;
  const publication = `${slot}_pub`;
  const type = `bench_shards${n}_${ctx.runId}`;
  const topic = `outbox.event.${type}`;
  const slots = Array.from({ length: n }, (_, i) => shardName(slot, i));
  const publications = Array.from({ length: n }, (_, i) => shardName(publication, i));
  await createTopic(ctx.admin, topic, opts.partitions);
  // A fresh outbox for every N: the previous N's rows gone, its WAL behind a checkpoint.
  await quiesce(ctx, 'outbox');
  const relays: BenchProcess[] = [];
  try {
    const init = await initShards(ctx, slot, publication, n);
    log(`  init --shards ${n}: ${init.trim().split('\n').slice(1).join('; ')}`);
    const tb = Date.now();
    await insertBacklog(ctx.db.url, 'outbox', type, events, 1);
    const endLsn = await currentWalLsn(ctx.pg);
    await settleBacklog(ctx);
    log(`  backlog: ${events} single-row transactions written in ${((Date.now() - tb) / 1000).toFixed(1)} s (end LSN ${Lsn.format(endLsn)})`);
    const broker0 = processCpuSeconds(ctx.brokerPid());
    const machine0 = machineCpuSeconds();
    for (let i = 0; i < n; i++)
      relays.push(
        spawnRelay(ctx, `shard-${i}-of-${n}`, slot, 'relay', 'at-least-once', { OUTBOX_TAIL_PUBLICATION: publication, OUTBOX_TAIL_SHARD: `${i}/${n}` }),
      );
    const spawnedAt = performance.timeOrigin + Math.min(...relays.map((r) => r.startedAt));
    const streaming = await Promise.all(
      relays.map(async (r) => {
        const line = await r.waitForLog(isStreaming);
        return { at: logTime(line), cpu: cpuOf(r) };
      }),
    );
    // A walsender is forked for its relay's replication connection: its CPU when done is all it spent on this backlog.
    const walsenders = await walsenderPids(ctx, slots);
    const done = await waitShardsDone(ctx, `shards ${n}`, relays, slots, { topic, records: events, endLsn, timeoutMs: catchupTimeout(events) });
    const relayCpuAtDone = relays.map(cpuOf);
    const walsenderCpuAtDone = walsenders.map((pid) => processCpuSeconds(pid));
    const broker1 = processCpuSeconds(ctx.brokerPid());
    const machine1 = machineCpuSeconds();
    const figures = shardCatchupFigures({
      shards: n,
      events,
      spawnedAt,
      streamingAt: streaming.map((s) => s.at),
      doneAt: done.doneAt,
      relayCpuAtStreaming: streaming.map((s) => s.cpu),
      relayCpuAtDone,
      walsenderCpuAtDone,
      brokerCpu: broker0 === null || broker1 === null ? null : [broker0, broker1],
      machineBusy: machine0 && machine1 ? [machine0.busy, machine1.busy] : null,
      relayPeakRssMb: relays.map((r) => r.peakRssMb()),
    });
    const [, up] = speedups([first ?? figures, figures]);
    const steadyR = opts.shardRate > 0 ? await shardSteady(ctx, n, relays, slots) : null;
    return {
      ...figures,
      records_in_kafka: done.records,
      speedup_vs_first: { vs_shards: up!.vs_shards, events_per_sec: up!.events_per_sec, events_per_sec_after_startup: up!.events_per_sec_after_startup },
      steady: steadyR,
      loadavg_1m: round(loadavg()[0]!, 2),
    };
  } finally {
    await Promise.all(relays.map((r) => r.stop()));
    for (const s of slots) await dropSlot(ctx.db.url, s);
    for (const p of publications) await ctx.pg.query(`drop publication if exists ${pg.escapeIdentifier(p)}`);
  }
}

function shardLine(r: ShardResult): string {
  const f = (x: number | null) => (x === null ? '-' : `${x} us`);
  const st = r.steady
    ? `; steady ${r.steady.rate}/s (writer ${r.steady.achieved_rate}/s): p50 ${r.steady.p50_ms} ms, p99 ${r.steady.p99_ms} ms, max ${r.steady.max_ms} ms, CPU per event relays ${f(r.steady.relay_cpu_us_per_event)}, walsender per slot ${f(r.steady.walsender_cpu_us_per_event_per_slot)}, ${r.steady.machine_busy_cores ?? '-'} cores busy`
    : '';
  return (
    `  shards ${r.shards}: ${r.events_per_sec} events/s from spawn (${r.seconds} s incl. ${r.startup_seconds} s startup), ${r.events_per_sec_after_startup} after startup, ` +
    `${r.speedup_vs_first.events_per_sec} x (${r.speedup_vs_first.events_per_sec_after_startup} x after startup) ${r.speedup_vs_first.vs_shards} shard(s); ` +
    `relay peak RSS [${r.relay_peak_rss_mb.join(', ')}] MB; CPU per event: relays ${f(r.relay_cpu_us_per_event)} (+ ${r.relay_startup_cpu_seconds} s startup), ` +
    `walsenders ${f(r.walsender_cpu_us_per_event)} (${f(r.walsender_cpu_us_per_event_per_slot)} per slot), broker ${f(r.broker_cpu_us_per_event)}, other ${f(r.other_cpu_us_per_event)}; ` +
    `machine ${r.machine_busy_cores ?? '-'} of ${cpus().length} cores busy; ${r.records_in_kafka} records in Kafka; load ${r.loadavg_1m}${st}`
  );
}

// ---------------------------------------------------------------- main

/** The relay's node binary when --relay-node names one runtime (several: compareVariants runs this bench once per runtime). */
const RELAY_NODE = opts.relayNodes.length === 1 ? resolveNodeBinary(opts.relayNodes[0]!) : undefined;

/** --plot, --plot-from: the run's charts as SVG files. */
async function plot(result: BenchResultLike): Promise<void> {
  const dir = flags['plot-dir'] ?? `${ROOT}docs/images`;
  for (const file of await writeCharts(result, dir)) log(`chart written: ${file}`);
}

async function main(): Promise<void> {
  if (flags['plot-from']) {
    await plot(JSON.parse(readFileSync(flags['plot-from'], 'utf8')) as BenchResultLike);
    return;
  }
  if (flags.plot && (opts.relayNodes.length > 1 || KAFKA_CLIENTS.length > 1 || COMPRESSIONS_BENCHED.length > 1))
    throw new Error('--plot draws one run: with several runtimes or clients, --json-out FILE, then --plot-from a run of its own');
  if (opts.relayNodes.length > 1) {
    await compareVariants({ axis: 'relay-node', values: opts.relayNodes.map(resolveNodeBinary), argv: process.argv.slice(2), flags, log });
    return;
  }
  if (KAFKA_CLIENTS.length > 1) {
    await compareVariants({ axis: 'kafka-client', values: KAFKA_CLIENTS, argv: process.argv.slice(2), flags, log });
    return;
  }
  if (COMPRESSIONS_BENCHED.length > 1) {
    await compareVariants({ axis: 'compression', values: COMPRESSIONS_BENCHED, argv: process.argv.slice(2), flags, log });
    return;
  }
  const t0 = Date.now();
  const loadAtStart = loadavg()[0]!;
  if (loadAtStart > 1) log(`warning: load average ${loadAtStart.toFixed(2)} before the run: other work on this machine will skew the numbers`);
  let stack: StackHandle | null = null;
  let databaseUrl = flags['database-url'];
  let brokers = flags.brokers
    ?.split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (!databaseUrl !== !brokers) throw new Error('give both --database-url and --brokers, or neither (a local stack is started)');
  let versions = { postgres: 'given', kafka: 'given' };
  if (PEER === 'debezium') {
    debezium = installDebezium();
    log(`Debezium Server ${debezium.version} in ${debezium.home}, on Java ${debezium.javaVersion} (${debezium.java})`);
    if (MODES.length > 1) log('  Debezium delivers at least once: it runs beside the at-least-once relay only');
  }
  if (PEER === 'conduit') {
    conduit = installConduit();
    log(`Conduit ${conduit.version} (${conduit.binary}), pipeline ${flags['conduit-pipeline'] ?? DEFAULT_CONDUIT_PIPELINE}`);
    if (MODES.length > 1) log('  Conduit delivers at least once: it runs beside the at-least-once relay only');
  }
  if (!databaseUrl || !brokers) {
    log('starting a local stack (dev/stack: OUTBOX_TAIL_STACK, default auto)');
    stack = await startStack({ log: (l) => log(`  ${l}`) });
    databaseUrl = stack.databaseUrl;
    brokers = stack.brokers;
    versions = stack.versions;
  }
  const stopStack = () => stack?.stop().catch(() => undefined);
  process.once('SIGINT', () => void Promise.resolve(stopStack()).then(() => process.exit(130)));
  // SIGTERM too: without a handler node dies without its exit hooks, which kill a running Debezium JVM.
  process.once('SIGTERM', () => void Promise.resolve(stopStack()).then(() => process.exit(143)));
  const db = await createBenchDatabase(databaseUrl);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const kafka = benchKafka(brokers);
  const admin = kafka.admin();
  await admin.connect();
  const runId = Date.now().toString(36);
  const ctx: Ctx = { db, brokers, kafka, admin, pg: client, runId, offsetsTopic: `outbox-tail.offsets.bench_${runId}`, brokerPid: () => stack?.kafka.pid() };
  const result: Record<string, unknown> = {};
  // At-least-once results keep their top-level fields; exactly-once results go under `exactly_once`, same shapes.
  const eos: Record<string, unknown> = {};
  const put = (mode: Delivery, key: string, value: unknown) => ((mode === 'exactly-once' ? eos : result)[key] = value);
  const putSteady = (mode: Delivery, value: SteadyResult) => {
    const target = mode === 'exactly-once' ? eos : result;
    ((target.steady ??= []) as SteadyResult[]).push(value);
  };
  const has = (s: Scenario) => opts.scenarios.has(s);
  const compare: CompareResult | null = debezium
    ? {
        debezium: { version: debezium.version, java: debezium.javaVersion, java_opts: opts.debeziumJavaOpts, props: opts.debeziumProps },
        first: PEER_FIRST ? 'debezium' : 'outbox-tail',
        steady: [],
      }
    : conduit
      ? {
          conduit: { version: conduit.version, pipeline: flags['conduit-pipeline'] ?? 'dev/bench/conduit/pipeline.yml' },
          first: PEER_FIRST ? 'conduit' : 'outbox-tail',
          steady: [],
        }
      : null;
  const tag = (mode: Delivery) => (MODES.length > 1 || mode === 'exactly-once' ? ` [${mode}]` : '');
  try {
    if (MODES.includes('exactly-once')) await createOffsetsTopic(admin, ctx.offsetsTopic);
    const events = opts.events;
    if (has('catchup') || has('limits')) {
      log(`catchup: ${events} single-row transactions`);
      // One slot per delivery mode, one for the decode limit and, with --compare, one for the peer, on the same backlog.
      const backlog = await prepareBacklog(ctx, 'catchup', events, 1, MODES.length + (compare ? 2 : 1));
      if (has('limits')) {
        const decode = await decodeLimit(ctx, backlog, backlog.slots[MODES.length]!, events);
        log(`  decode limit (null sink): ${decode.events_per_sec} events/s (${decode.seconds} s from streaming); ${cpuLine(decode.cpu)}`);
        const kafkaL = await kafkaLimit(ctx, backlog, events);
        log(
          `  Kafka limit (${opts.kafkaClient} alone): ${kafkaL.events_per_sec} events/s (${kafkaL.seconds} s); CPU per event: client ${kafkaL.client_us_per_event} us, broker ${kafkaL.broker_us_per_event ?? '-'} us`,
        );
        const perfTest = await perfTestLimit(ctx, backlog, events);
        result.limits = {
          decode_events_per_sec: decode.events_per_sec,
          kafka_events_per_sec: kafkaL.events_per_sec,
          perf_test_events_per_sec: perfTest.events_per_sec,
          perf_test: perfTest,
          decode_seconds: decode.seconds,
          decode_cpu_seconds: decode.cpu_seconds,
          kafka_seconds: kafkaL.seconds,
          decode_cpu: decode.cpu,
          kafka_client_us_per_event: kafkaL.client_us_per_event,
          kafka_broker_us_per_event: kafkaL.broker_us_per_event,
        };
      }
      if (has('catchup') && compare) {
        // A fresh broker is about 20% slower on its first run: warm it before anything is timed, unless limits did.
        if (has('limits')) compare.broker_warmup = { by: 'limits-scenario', events, seconds: null };
        else {
          const warm = await kafkaLimit(ctx, backlog, events);
          compare.broker_warmup = { by: 'kafka-limit', events, seconds: warm.seconds };
          log(`  broker warm-up (untimed): the Kafka client alone sent ${events} records in ${warm.seconds} s`);
        }
      }
      if (has('catchup')) {
        // With --compare, the same backlog from a fresh slot of its own for the peer (Debezium Server or
        // Conduit), to the at-least-once relay's topic, right before or after that relay: the second one's
        // records join the first's (record-match tells the copies apart). The exactly-once relay has topics of its own.
        const runPeer = async (base: number) => {
          const d = await relayCatchup(
            ctx,
            `${PEER!}-catchup`,
            backlog.slots[MODES.length + 1]!,
            backlog.type,
            events,
            backlog.endLsn,
            'at-least-once',
            startPeer,
            base,
          );
          // Conduit reports its position to PostgreSQL every 10 s (fixed in its connector): when its records
          // were all in Kafka tells how much of its time is that wait.
          const inKafka = PEER === 'conduit' && d.kafka_seconds !== undefined ? `; all records in Kafka after ${d.kafka_seconds} s` : '';
          log(
            `  ${PEER_LABEL}: ${d.events_per_sec} events/s (${d.seconds} s incl. ${d.startup_seconds} s startup${inKafka}), peak RSS ${d.peak_rss_mb} MB; ${cpuLine(d.cpu, PEER!)}`,
          );
          return d;
        };
        for (const mode of nextModes()) {
          const beside = compare && mode === 'at-least-once';
          const d = beside && PEER_FIRST ? await runPeer(0) : undefined;
          const base = beside && PEER_FIRST ? events : 0;
          const r = await relayCatchup(
            ctx,
            `catchup-${mode}`,
            backlog.slots[MODES.indexOf(mode)]!,
            backlog.type,
            events,
            backlog.endLsn,
            mode,
            startOutboxTail,
            base,
          );
          log(
            `  relay${tag(mode)}: ${r.events_per_sec} events/s (${r.seconds} s incl. ${r.startup_seconds} s startup), peak RSS ${r.peak_rss_mb} MB; ${cpuLine(r.cpu)}${txnLine(r.relay_sends)}`,
          );
          put(mode, 'catchup', r);
          if (compare && beside) {
            const peerResult = d ?? (await runPeer(events));
            compare.catchup = { outbox_tail: r, [PEER!]: peerResult };
            compare.rounds = [compareRound(1, PEER_FIRST ? PEER! : 'outbox-tail', r, peerResult)];
            log(roundLine(compare.rounds[0]!));
            compare.record_match = await matchRecords(kafka, backlog.topic, 2 * events, PEER!);
            log(`  record bytes: ${recordMatchLine(compare.record_match)}`);
          }
        }
      }
      for (const s of backlog.slots) await dropSlot(db.url, s);
      // Further rounds on fresh backlogs, the order alternating, at least once each way with the default 2.
      if (has('catchup') && compare?.rounds) {
        for (let round = 2; round <= COMPARE_ROUNDS; round++) {
          const peerFirst = round % 2 === 0 ? !PEER_FIRST : PEER_FIRST;
          const again = await prepareBacklog(ctx, `catchup_r${round}`, events, 1, 2);
          const runOne = (which: 'outbox-tail' | Peer, base: number) =>
            relayCatchup(
              ctx,
              which === 'outbox-tail' ? `catchup-r${round}` : `${PEER!}-catchup-r${round}`,
              again.slots[which === 'outbox-tail' ? 0 : 1]!,
              again.type,
              events,
              again.endLsn,
              'at-least-once',
              which === 'outbox-tail' ? startOutboxTail : startPeer,
              base,
            );
          const first = await runOne(peerFirst ? PEER! : 'outbox-tail', 0);
          const second = await runOne(peerFirst ? 'outbox-tail' : PEER!, events);
          const [r, d] = peerFirst ? [second, first] : [first, second];
          compare.rounds.push(compareRound(round, peerFirst ? PEER! : 'outbox-tail', r, d));
          log(roundLine(compare.rounds[compare.rounds.length - 1]!));
          for (const s of again.slots) await dropSlot(db.url, s);
        }
      }
    }
    if (has('catchup_batched')) {
      log(`catchup_batched: ${events} rows in 100-row transactions`);
      const backlog = await prepareBacklog(ctx, 'batched', events, 100, MODES.length);
      for (const mode of nextModes()) {
        const r = await relayCatchup(ctx, `catchup-batched-${mode}`, backlog.slots[MODES.indexOf(mode)]!, backlog.type, events, backlog.endLsn, mode);
        log(
          `  relay${tag(mode)}: ${r.events_per_sec} events/s (${r.seconds} s incl. ${r.startup_seconds} s startup), peak RSS ${r.peak_rss_mb} MB; ${cpuLine(r.cpu)}${txnLine(r.relay_sends)}`,
        );
        put(mode, 'catchup_batched', r);
      }
      for (const s of backlog.slots) await dropSlot(db.url, s);
    }
    if (has('big_txn')) {
      log(`big_txn: one transaction of ${opts.bigRows} rows`);
      for (const mode of nextModes()) {
        const r = await bigTxn(ctx, opts.bigRows, mode);
        log(`  relay${tag(mode)}: ${r.seconds} s after commit, peak RSS ${r.peak_rss_mb} MB (idle ${r.idle_rss_mb} MB)${txnLine(r.relay_sends)}`);
        put(mode, 'big_txn', r);
      }
    }
    if (has('steady')) {
      const runPeer = async (rate: number) => {
        const d = await steady(
          ctx,
          PEER!,
          rate,
          'outbox',
          (type) => startRelayOn(ctx, `${PEER!}-steady-${rate}`, type, 'at-least-once', startPeer),
          undefined,
          // Conduit's records carry no headers, so no outbox id: they are told apart by the payload's orderId.
          PEER === 'conduit' ? 'payload-order-id' : 'id-header',
        );
        log(
          `  ${PEER_LABEL} ${rate}/s: p50 ${d.p50_ms} ms, p99 ${d.p99_ms} ms, max ${d.max_ms} ms (${d.records} records, writer ${d.achieved_rate}/s), peak RSS ${d.peak_rss_mb} MB; ${cpuLine(d.cpu, PEER!)}`,
        );
        return d;
      };
      for (const rate of opts.rates) {
        const floor = await steadyFloor(ctx, rate);
        log(
          `  Kafka floor ${rate}/s: p50 ${floor.p50_ms} ms, p99 ${floor.p99_ms} ms, p999 ${floor.p999_ms} ms, max ${floor.max_ms} ms (${floor.records} records in ${floor.requests} requests, writer ${floor.writer_rate}/s); client ${floor.client_us_per_event} us/event`,
        );
        ((result.steady_floor ??= []) as SteadyFloor[]).push(floor);
        for (const mode of nextModes()) {
          // With --compare, the peer runs beside the at-least-once relay only (right before or after it).
          const beside = compare && mode === 'at-least-once';
          const first = beside && PEER_FIRST ? await runPeer(rate) : undefined;
          const label = mode === 'exactly-once' ? 'steady_eos' : 'steady';
          const r = await steady(ctx, label, rate, 'outbox', (type) => startRelayOn(ctx, `steady-${rate}-${mode}`, type, mode), mode);
          const sends = r.relay_sends;
          const sendLine = sends
            ? `; ${sends.requests} produce requests of ${sends.mean_records} records, ${sends.mean_ms} ms mean, ${Math.round(sends.over_10ms * 100)}% > 10 ms, ${Math.round(sends.over_25ms * 100)}% > 25 ms; event-loop delay (10 ms sampler, raw) p99 ${sends.event_loop_p99_ms} ms, max ${sends.event_loop_max_ms} ms; ${sends.gc_major_count} major GCs, ${sends.gc_major_total_ms} ms`
            : '';
          const appended = mode === 'exactly-once' ? ` (appended: p50 ${r.p50_ms_appended} ms, p99 ${r.p99_ms_appended} ms)` : '';
          log(
            `  relay${tag(mode)} ${rate}/s: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms${appended} (${r.records} records, writer ${r.achieved_rate}/s), peak RSS ${r.peak_rss_mb} MB${sendLine}${txnLine(sends ?? null)}; ${cpuLine(r.cpu)}`,
          );
          putSteady(mode, r);
          if (compare && beside) compare.steady.push({ rate, outbox_tail: r, [PEER!]: first ?? (await runPeer(rate)) });
        }
      }
    }
    if (has('polling')) {
      log(`polling_baseline: catch-up of ${events} rows, then steady rates (poll interval ${opts.pollIntervalMs} ms)`);
      const type = `bench_polling_${ctx.runId}`;
      const topic = `outbox.event.${type}`;
      await createTopic(admin, topic, opts.partitions);
      await client.query(`truncate ${POLLING_TABLE}`);
      const tb = Date.now();
      await insertBacklog(db.url, POLLING_TABLE, type, events, 1);
      log(`  backlog: ${events} single-row transactions written in ${((Date.now() - tb) / 1000).toFixed(1)} s`);
      const proc = startPolling(ctx, topic);
      let catchupRate: number;
      try {
        await proc.waitForLog((l) => l.event === 'ready');
        const readyAt = nowMs();
        const { doneAt } = await waitDone(ctx, 'polling catch-up', { topic, records: events, timeoutMs: catchupTimeout(events) * 3, proc });
        const seconds = (doneAt - readyAt) / 1000;
        catchupRate = Math.round(events / seconds);
        log(`  polling catch-up: ${catchupRate} events/s (${seconds.toFixed(2)} s from ready), peak RSS ${Math.round(proc.peakRssMb())} MB`);
      } finally {
        await proc.stop();
      }
      const steadyOut: SteadyResult[] = [];
      for (const rate of opts.rates) {
        const r = await steady(ctx, 'polling', rate, POLLING_TABLE, async (_type, t) => {
          const p = startPolling(ctx, t);
          await p.waitForLog((l) => l.event === 'ready');
          return { proc: p };
        });
        log(
          `  polling ${rate}/s: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms (${r.records} records, writer ${r.achieved_rate}/s); ${cpuLine(r.cpu, 'poller')}`,
        );
        steadyOut.push(r);
      }
      result.polling_baseline = { catchup_events_per_sec: catchupRate, steady: steadyOut };
    }
    if (has('write_side')) {
      log(
        `write_side: the order workload for ${opts.writeSeconds} s each way (${WRITE_SIDE_VARIANTS.join(', ')}), ${opts.writeRounds} rounds in alternating order, ${opts.writeConcurrency} clients as fast as they go, then the relay catches up`,
      );
      result.write_side = await writeSide(ctx);
    }
    if (has('tracing')) {
      log('tracing: what OpenTelemetry costs per event when on (dev/bench/tracing-cost.ts)');
      result.tracing = await tracingCost(log);
    }
    if (has('value_format')) {
      const vf = await benchValueFormat();
      log(valueFormatLine(vf));
      result.value_format = vf;
    }
    if (has('shards')) {
      log(
        `shards: for N in ${opts.shards.join(', ')}: init --shards N, ${events} single-row transactions, then N relays (run --shard i/N) at once${opts.shardRate > 0 ? `; then ${opts.shardRate}/s on the same relays` : ''}`,
      );
      if (!MODES.includes('at-least-once')) log('  shards: the relays run at least once (the scenario has no exactly-once variant)');
      const out: ShardResult[] = [];
      for (const n of opts.shards) {
        const r = await shardRun(ctx, n, out[0]);
        log(shardLine(r));
        out.push(r);
      }
      result.shards = out;
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
    await client.end().catch(() => undefined);
    await db.drop().catch((e: unknown) => log(`warning: dropping ${db.name}: ${(e as Error).message}`));
    await stopStack();
  }
  const ceiling = machineCeiling(result.catchup as CatchupResult | undefined, result.limits as Record<string, unknown> | undefined);
  if (ceiling) {
    (result.limits as Record<string, unknown>).machine_events_per_sec = ceiling.events_per_sec;
    (result.limits as Record<string, unknown>).machine_us_per_event = ceiling.parts;
    log(
      `machine ceiling: ${ceiling.events_per_sec} events/s if all ${cpus().length} cores did nothing but this (${ceiling.us_per_event} us of CPU per event: ${Object.entries(
        ceiling.parts,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    );
  }
  if (compare) result.compare = compare;
  if (Object.keys(eos).length > 0) result.exactly_once = eos;
  result.targets = targets(result);
  result.env = {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    mem_gb: Math.round(totalmem() / 2 ** 30),
    loadavg_1m_at_start: round(loadAtStart, 2),
    loadavg_1m_at_end: round(loadavg()[0]!, 2),
    kafka_client: opts.kafkaClient,
    delivery: MODES,
    node: process.version,
    relay_node: RELAY_NODE ? execFileSync(RELAY_NODE, ['--version'], { encoding: 'utf8' }).trim() : process.version,
    ...(debezium ? { debezium: debezium.version, debezium_java: debezium.javaVersion } : {}),
    ...(conduit ? { conduit: conduit.version } : {}),
    postgres: versions.postgres,
    kafka: versions.kafka,
    partitions: opts.partitions,
    events: opts.events,
    ...(opts.scenarios.has('shards') ? { shards: opts.shards, shard_rate: opts.shardRate } : {}),
    steady_seconds: opts.steadySeconds,
    write_seconds: opts.writeSeconds,
    write_concurrency: opts.writeConcurrency,
    write_rounds: opts.writeRounds,
    warmup_seconds: opts.warmupSeconds,
    relay_env: opts.relayEnv,
    node_args: opts.nodeArgs,
    wall_seconds: Math.round((Date.now() - t0) / 1000),
  };
  if (flags['json-out']) writeFileSync(flags['json-out'], `${JSON.stringify(result)}\n`);
  if (flags.plot) await plot(result as BenchResultLike);
  if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(table(result) + (compare ? `\n${compareTable(compare, result.env as Record<string, unknown>)}` : ''));
  // With --json, the side-by-side table still reaches the terminal, with the progress.
  if (flags.json && compare) process.stderr.write(compareTable(compare, result.env as Record<string, unknown>));
  if (flags.json && result.write_side)
    process.stderr.write(writeSideTable(result.write_side as Parameters<typeof writeSideTable>[0], result.env as Record<string, unknown>));
}

// ---------------------------------------------------------------- report

interface Verdict {
  target: string;
  value: string;
  ok: boolean;
}

/**
 * What the whole machine could relay if every core were busy with nothing
 * else: its cores divided by the CPU one event costs across all processes,
 * taken from the same run (the relay's pipeline from the decode limit, the
 * Kafka client from the Kafka limit, the walsender, broker and rest from the
 * catch-up). An upper bound: it assumes perfect overlap and no idle time.
 */
function machineCeiling(
  catchup: CatchupResult | undefined,
  limits: Record<string, unknown> | undefined,
): { events_per_sec: number; us_per_event: number; parts: Record<string, number> } | null {
  const decodeRelay = (limits?.decode_cpu as CpuWindow | undefined)?.us_per_event.relay;
  const client = limits?.kafka_client_us_per_event as number | undefined;
  const u = catchup?.cpu.us_per_event;
  if (!u || decodeRelay == null || client == null || u.walsender === null || u.broker === null) return null;
  const parts = { relay_pipeline: decodeRelay, kafka_client: client, walsender: u.walsender, broker: u.broker, other: Math.max(0, u.other ?? 0) };
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  return { events_per_sec: Math.round((catchup!.cpu.cores * 1e6) / total), us_per_event: round(total), parts };
}

/**
 * The targets of issue 28 (2026-12): how close the relay comes to the Kafka
 * side's limits, to Debezium Server, and what it costs. Each verdict says the
 * claim and the figure from this run; a single run is not the median of three
 * the issue asks for, so the docs quote medians, not these lines.
 */
function targets(r: Record<string, unknown>): Verdict[] {
  const out: Verdict[] = [];
  const catchup = r.catchup as CatchupResult | undefined;
  const limits = r.limits as { decode_events_per_sec: number; kafka_events_per_sec: number; perf_test_events_per_sec?: number } | undefined;
  const steadyR = r.steady as SteadyResult[] | undefined;
  const polling = r.polling_baseline as { catchup_events_per_sec: number; steady: SteadyResult[] } | undefined;
  if (catchup && limits)
    out.push({
      target: 'catchup >= 0.9 x the sink limit (the Kafka client alone)',
      value: `${round(catchup.events_per_sec / limits.kafka_events_per_sec, 2)} x ${limits.kafka_events_per_sec}`,
      ok: catchup.events_per_sec >= 0.9 * limits.kafka_events_per_sec,
    });
  if (catchup && limits?.perf_test_events_per_sec)
    out.push({
      target: 'catchup >= 0.8 x kafka-producer-perf-test',
      value: `${round(catchup.events_per_sec / limits.perf_test_events_per_sec, 2)} x ${limits.perf_test_events_per_sec}`,
      ok: catchup.events_per_sec >= 0.8 * limits.perf_test_events_per_sec,
    });
  const relayUs = catchup?.cpu.us_per_event.relay;
  if (relayUs != null) out.push({ target: 'catchup relay CPU <= 15 us/event', value: `${relayUs} us`, ok: relayUs <= 15 });
  const at5k = steadyR?.find((s) => s.rate === 5000);
  // The Kafka client alone at the same rate beside the same writer: the part of the p99 no relay can take away on this machine.
  const floor5k = (r.steady_floor as SteadyFloor[] | undefined)?.find((f) => f.rate === 5000);
  const floorNote = floor5k ? ` (Kafka floor p99 ${floor5k.p99_ms} ms)` : '';
  if (at5k) out.push({ target: 'steady 5,000/s p99 <= 5 ms (at-least-once)', value: `${at5k.p99_ms} ms${floorNote}`, ok: at5k.p99_ms <= 5 });
  const eos = r.exactly_once as
    { catchup?: CatchupResult; catchup_batched?: CatchupResult; big_txn?: { peak_rss_mb: number }; steady?: SteadyResult[] } | undefined;
  const rss = [
    ...[
      catchup,
      r.catchup_batched as CatchupResult | undefined,
      r.big_txn as { peak_rss_mb: number } | undefined,
      eos?.catchup,
      eos?.catchup_batched,
      eos?.big_txn,
    ]
      .filter((x) => x !== undefined)
      .map((x) => x.peak_rss_mb),
    ...[...(steadyR ?? []), ...(eos?.steady ?? [])].map((s) => s.peak_rss_mb),
  ];
  if (rss.length) out.push({ target: 'relay peak RSS <= 120 MB (every scenario)', value: `${Math.max(...rss)} MB`, ok: Math.max(...rss) <= 120 });
  const cmp = (r.compare as CompareResult | undefined)?.catchup;
  if (cmp?.debezium) {
    const [o, d] = [cmp.outbox_tail, cmp.debezium];
    out.push({
      target: '>= 3 x Debezium Server from spawn',
      value: `${round(o.events_per_sec / d.events_per_sec, 2)} x (${o.events_per_sec} vs ${d.events_per_sec})`,
      ok: o.events_per_sec >= 3 * d.events_per_sec,
    });
    out.push({
      target: '>= 2.5 x Debezium Server after startup',
      value: `${round(o.events_per_sec_after_startup / d.events_per_sec_after_startup, 2)} x (${o.events_per_sec_after_startup} vs ${d.events_per_sec_after_startup})`,
      ok: o.events_per_sec_after_startup >= 2.5 * d.events_per_sec_after_startup,
    });
  }
  if (cmp?.conduit) {
    // Issue 45: ahead of the Go peer side by side (no ratio set yet).
    const [o, c] = [cmp.outbox_tail, cmp.conduit];
    out.push({
      target: 'ahead of Conduit from spawn',
      value: `${round(o.events_per_sec / c.events_per_sec, 2)} x (${o.events_per_sec} vs ${c.events_per_sec})`,
      ok: o.events_per_sec > c.events_per_sec,
    });
    out.push({
      target: 'ahead of Conduit after startup',
      value: `${round(o.events_per_sec_after_startup / c.events_per_sec_after_startup, 2)} x (${o.events_per_sec_after_startup} vs ${c.events_per_sec_after_startup})`,
      ok: o.events_per_sec_after_startup > c.events_per_sec_after_startup,
    });
  }
  if (catchup && polling)
    out.push({
      target: 'beats polling: catch-up',
      value: `${catchup.events_per_sec} vs ${polling.catchup_events_per_sec}`,
      ok: catchup.events_per_sec > polling.catchup_events_per_sec,
    });
  for (const s of steadyR ?? []) {
    const p = polling?.steady.find((x) => x.rate === s.rate);
    if (p) out.push({ target: `beats polling: p99 at ${s.rate}/s`, value: `${s.p99_ms} vs ${p.p99_ms} ms`, ok: s.p99_ms < p.p99_ms });
  }
  for (const key of ['catchup', 'catchup_batched'] as const) {
    const alo = r[key] as CatchupResult | undefined;
    const e = eos?.[key];
    if (alo && e)
      out.push({
        target: `exactly-once ${key} >= 0.9 x at-least-once`,
        value: `${round(e.events_per_sec / alo.events_per_sec, 2)} x (${e.events_per_sec} vs ${alo.events_per_sec})`,
        ok: e.events_per_sec >= 0.9 * alo.events_per_sec,
      });
  }
  const shardRuns = r.shards as ShardResult[] | undefined;
  const one = shardRuns?.find((s) => s.shards === 1);
  const two = shardRuns?.find((s) => s.shards === 2);
  if (one && two)
    out.push({
      target: '2 shards >= 1.25 x 1 shard (catch-up events/s)',
      value: `${round(two.events_per_sec / one.events_per_sec, 2)} x (${two.events_per_sec} vs ${one.events_per_sec})`,
      ok: two.events_per_sec >= 1.25 * one.events_per_sec,
    });
  const eos5k = eos?.steady?.find((s) => s.rate === 5000);
  if (eos5k) out.push({ target: 'exactly-once steady 5,000/s p99 <= 10 ms (read_committed)', value: `${eos5k.p99_ms} ms${floorNote}`, ok: eos5k.p99_ms <= 10 });
  return out;
}

/** The side by side of --compare: the peer's results under its name (debezium or conduit), beside outbox-tail's. */
interface CompareRound {
  round: number;
  first: 'outbox-tail' | Peer;
  outbox_tail: { events_per_sec: number; events_per_sec_after_startup: number; us_per_event: number | null; machine_busy_cores: number | null };
  peer: { events_per_sec: number; events_per_sec_after_startup: number };
  ratio_from_spawn: number;
  ratio_after_startup: number;
}

function compareRound(round: number, first: 'outbox-tail' | Peer, r: CatchupResult, d: CatchupResult): CompareRound {
  return {
    round,
    first,
    outbox_tail: {
      events_per_sec: r.events_per_sec,
      events_per_sec_after_startup: r.events_per_sec_after_startup,
      us_per_event: r.cpu.us_per_event.relay,
      machine_busy_cores: r.cpu.machine_busy_cores,
    },
    peer: { events_per_sec: d.events_per_sec, events_per_sec_after_startup: d.events_per_sec_after_startup },
    ratio_from_spawn: Math.round((r.events_per_sec / d.events_per_sec) * 100) / 100,
    ratio_after_startup: Math.round((r.events_per_sec_after_startup / d.events_per_sec_after_startup) * 100) / 100,
  };
}

const roundLine = (c: CompareRound) =>
  `  round ${c.round} (${c.first} first): outbox-tail ${c.outbox_tail.events_per_sec} (${c.outbox_tail.events_per_sec_after_startup}) events/s, ${PEER_LABEL} ${c.peer.events_per_sec} (${c.peer.events_per_sec_after_startup}): ${c.ratio_from_spawn}x from spawn, ${c.ratio_after_startup}x after start-up; busy cores ${c.outbox_tail.machine_busy_cores ?? '-'}`;

interface CompareResult {
  /** props: the --debezium-prop overrides of application.properties. */
  debezium?: { version: string; java: string; java_opts: string[]; props: Record<string, string> };
  /** pipeline: the pipeline file Conduit ran (--conduit-pipeline, default dev/bench/conduit/pipeline.yml). */
  conduit?: { version: string; pipeline: string };
  first: 'outbox-tail' | Peer;
  /** The same single-row backlog from two fresh slots, outbox-tail first, to the same topic. */
  catchup?: { outbox_tail: CatchupResult; debezium?: CatchupResult; conduit?: CatchupResult };
  /** Both relays' copies of that backlog compared record by record. */
  record_match?: RecordMatch;
  /** Before the first timed catch-up: the Kafka client alone through the broker (or the limits scenario did it). */
  broker_warmup?: { by: 'kafka-limit' | 'limits-scenario'; events: number; seconds: number | null };
  /** Every catch-up round (the first is `catchup` above), who went first, and the ratios. */
  rounds?: CompareRound[];
  steady: Array<{ rate: number; outbox_tail: SteadyResult; debezium?: SteadyResult; conduit?: SteadyResult }>;
}

function recordMatchLine(m: RecordMatch): string {
  const peer = m[PEER!]!;
  const diff = Object.entries(m.header_value_examples)
    .map(([k, v]) => `${k} "${v.outbox_tail}" vs "${v[PEER!] ?? ''}"`)
    .join(', ');
  return (
    `${m.ok ? 'match' : 'MISMATCH'}: ${m.pairs} pairs, ${m.unpaired} unpaired, key equal ${m.key_equal}, value equal ${m.value_equal}, same partition ${m.same_partition}; ` +
    `headers outbox-tail [${m.outbox_tail.header_names.join(', ')}] ${m.outbox_tail.mean_header_bytes} B, ${PEER_LABEL} [${peer.header_names.join(', ')}] ${peer.mean_header_bytes} B; ` +
    `key ${m.outbox_tail.mean_key_bytes} vs ${peer.mean_key_bytes} B, value ${m.outbox_tail.mean_value_bytes} vs ${peer.mean_value_bytes} B` +
    (diff ? `; header values differing: ${diff}` : '')
  );
}

/** Both relays in one table: the catch-up figures, then p50 / p99 / max (peak RSS) per steady rate. */
function compareTable(c: CompareResult, env: Record<string, unknown>): string {
  const peer = PEER!;
  const head = ['relay', 'events/s from spawn', 'after startup', 'startup s', 'peak RSS MB', 'CPU us/event', 'busy cores'];
  for (const s of c.steady) head.push(`${s.rate}/s p50 / p99 / max ms (peak RSS, writer rate)`);
  const rows: string[][] = [head];
  const relays: Array<[string, 'outbox_tail' | Peer]> = [
    ['outbox-tail', 'outbox_tail'],
    c.debezium ? [`Debezium Server ${c.debezium.version}`, 'debezium'] : [`Conduit ${c.conduit?.version ?? ''}`, 'conduit'],
  ];
  for (const [label, key] of relays) {
    const k = c.catchup?.[key];
    const row = [
      label,
      k ? String(k.events_per_sec) : '-',
      k ? String(k.events_per_sec_after_startup) : '-',
      k ? String(k.startup_seconds) : '-',
      k ? String(k.peak_rss_mb) : '-',
      k?.cpu.us_per_event.relay != null ? String(k.cpu.us_per_event.relay) : '-',
      k?.cpu.machine_busy_cores != null ? `${k.cpu.machine_busy_cores} of ${k.cpu.cores}` : '-',
    ];
    for (const s of c.steady) {
      const x = s[key];
      // The writer's achieved rate too: on a loaded machine it can fall short, and then the rates differ.
      row.push(x ? `${x.p50_ms} / ${x.p99_ms} / ${x.max_ms} (${x.peak_rss_mb} MB, ${x.achieved_rate}/s)` : '-');
    }
    rows.push(row);
  }
  const lines = markdownTable(rows);
  const k = c.catchup?.outbox_tail;
  const inKafka = c.catchup?.conduit;
  const load = `load average (1 min) ${String(env.loadavg_1m_at_start)} at start, ${String(env.loadavg_1m_at_end)} at end`;
  const notes = [
    k
      ? `catch-up: ${k.events} single-row transactions from fresh slots, ${PEER_FIRST ? PEER_LABEL : 'outbox-tail'} first; CPU per event and busy cores from "streaming" to done`
      : null,
    inKafka?.kafka_seconds !== undefined
      ? `Conduit had every record in Kafka after ${inKafka.kafka_seconds} s from spawn (${Math.round(k!.events / inKafka.kafka_seconds)} events/s); its slot confirmed ` +
        `${round(inKafka.seconds - inKafka.kafka_seconds, 2)} s later: its connector reports its position every 10 s (fixed in v0.14.0)`
      : null,
    c.steady.length
      ? `steady: ${opts.warmupSeconds} s warm-up, ${opts.steadySeconds} s measured, ${PEER_FIRST ? PEER_LABEL : 'outbox-tail'} first; latency = LogAppendTime - INSERT sent`
      : null,
    MODES.length > 1
      ? `outbox-tail here is the at-least-once relay (${PEER_LABEL} delivers at least once); exactly-once: "delivery modes" table, "exactly_once" in the JSON`
      : null,
    c.record_match ? `record bytes: ${recordMatchLine(c.record_match)}` : null,
    c.debezium
      ? `Java ${c.debezium.java}${c.debezium.java_opts.length ? ` ${c.debezium.java_opts.join(' ')}` : ''}; Debezium settings: dev/bench/debezium/application.properties${Object.entries(
          c.debezium.props,
        )
          .map(([k, v]) => `, ${k}=${v}`)
          .join('')}; ${load}`
      : `Conduit settings: dev/bench/conduit/conduit.yaml, ${c.conduit?.pipeline ?? ''}; ${load}`,
  ].filter((x): x is string => x !== null);
  return `side by side (--compare ${peer}):\n${lines.join('\n')}\n${notes.map((n) => `  ${n}`).join('\n')}\n`;
}

/** A Markdown table of `rows` (the first is the head): first column left-aligned, the others right-aligned. */
function markdownTable(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const fmt = (row: readonly string[]) => `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  return [fmt(rows[0]!), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.slice(1).map(fmt)];
}

function table(r: Record<string, unknown>): string {
  const rows: string[][] = [['scenario', 'events/s', 'seconds', 'p50 ms', 'p99 ms', 'max ms', 'peak RSS MB']];
  const c = (x: unknown) => (x === undefined ? '-' : String(x));
  const catchup = r.catchup as CatchupResult | undefined;
  const batched = r.catchup_batched as CatchupResult | undefined;
  const limits = r.limits as
    { decode_events_per_sec: number; kafka_events_per_sec: number; decode_seconds: number; kafka_seconds: number; perf_test?: PerfTestLimit } | undefined;
  const big = r.big_txn as { rows: number; seconds: number; peak_rss_mb: number } | undefined;
  if (catchup) rows.push(['catchup (1-row txns)', c(catchup.events_per_sec), c(catchup.seconds), '-', '-', '-', c(catchup.peak_rss_mb)]);
  if (batched) rows.push(['catchup_batched (100-row txns)', c(batched.events_per_sec), c(batched.seconds), '-', '-', '-', c(batched.peak_rss_mb)]);
  if (limits) {
    rows.push(['limit: decode (null sink)', c(limits.decode_events_per_sec), c(limits.decode_seconds), '-', '-', '-', '-']);
    rows.push([`limit: Kafka (${opts.kafkaClient} alone)`, c(limits.kafka_events_per_sec), c(limits.kafka_seconds), '-', '-', '-', '-']);
    if (limits.perf_test)
      rows.push(['limit: Kafka (kafka-producer-perf-test)', c(limits.perf_test.events_per_sec), c(limits.perf_test.seconds), '-', '-', '-', '-']);
  }
  if (big) rows.push([`big_txn (${big.rows} rows)`, c(Math.round(big.rows / big.seconds)), c(big.seconds), '-', '-', '-', c(big.peak_rss_mb)]);
  for (const s of (r.steady as SteadyResult[] | undefined) ?? [])
    rows.push([`steady ${s.rate}/s`, c(s.achieved_rate), c(opts.steadySeconds), c(s.p50_ms), c(s.p99_ms), c(s.max_ms), c(s.peak_rss_mb)]);
  for (const s of (r.shards as ShardResult[] | undefined) ?? [])
    rows.push([
      `shards ${s.shards} (catch-up${s.steady ? `; steady ${s.steady.rate}/s` : ''})`,
      c(s.events_per_sec),
      c(s.seconds),
      c(s.steady?.p50_ms),
      c(s.steady?.p99_ms),
      c(s.steady?.max_ms),
      c(Math.max(...s.relay_peak_rss_mb)),
    ]);
  const polling = r.polling_baseline as { catchup_events_per_sec: number; steady: SteadyResult[] } | undefined;
  if (polling) {
    rows.push(['polling: catchup', c(polling.catchup_events_per_sec), '-', '-', '-', '-', '-']);
    for (const s of polling.steady)
      rows.push([`polling: steady ${s.rate}/s`, c(s.achieved_rate), c(opts.steadySeconds), c(s.p50_ms), c(s.p99_ms), c(s.max_ms), '-']);
  }
  const lines = markdownTable(rows);
  const eosTable = deliveryTable(r);
  const verdicts = (r.targets as Verdict[]).map((v) => `  ${v.ok ? 'PASS' : 'FAIL'}  ${v.target}: ${v.value}`);
  const ws = r.write_side as Parameters<typeof writeSideTable>[0] | undefined;
  return `${rows.length > 1 ? `${lines.join('\n')}\n` : ''}${eosTable}${ws ? `\n${writeSideTable(ws, r.env as Record<string, unknown>)}` : ''}\ntargets:\n${verdicts.join('\n')}\n`;
}

/** The delivery modes side by side (the exactly-once results, and the at-least-once ones of the same run when there are). */
function deliveryTable(r: Record<string, unknown>): string {
  const eos = r.exactly_once as { catchup?: CatchupResult; catchup_batched?: CatchupResult; big_txn?: BigTxnResult; steady?: SteadyResult[] } | undefined;
  if (!eos) return '';
  const rows: string[][] = [['scenario', 'at-least-once', 'exactly-once', 'ratio', 'PG txns per Kafka txn', 'commit mean ms']];
  const c = (x: unknown) => (x === undefined || x === null ? '-' : String(x));
  const txn = (sends: RelaySends | null | undefined) => [
    c(sends?.kafka_transactions?.pg_transactions_per_commit),
    c(sends?.kafka_transactions?.commit_mean_ms),
  ];
  for (const key of ['catchup', 'catchup_batched'] as const) {
    const a = r[key] as CatchupResult | undefined;
    const e = eos[key];
    if (!e) continue;
    rows.push([
      `${key}, events/s (peak RSS MB)`,
      a ? `${a.events_per_sec} (${a.peak_rss_mb})` : '-',
      `${e.events_per_sec} (${e.peak_rss_mb})`,
      a ? c(round(e.events_per_sec / a.events_per_sec, 2)) : '-',
      ...txn(e.relay_sends),
    ]);
  }
  const bigA = r.big_txn as BigTxnResult | undefined;
  if (eos.big_txn)
    rows.push([
      `big_txn ${eos.big_txn.rows} rows, s (peak RSS MB)`,
      bigA ? `${bigA.seconds} (${bigA.peak_rss_mb})` : '-',
      `${eos.big_txn.seconds} (${eos.big_txn.peak_rss_mb})`,
      bigA ? c(round(eos.big_txn.seconds / bigA.seconds, 2)) : '-',
      ...txn(eos.big_txn.relay_sends),
    ]);
  for (const e of eos.steady ?? []) {
    const a = (r.steady as SteadyResult[] | undefined)?.find((x) => x.rate === e.rate);
    const lat = (s: SteadyResult) => `${s.p50_ms} / ${s.p99_ms} / ${s.max_ms}`;
    rows.push([
      `steady ${e.rate}/s p50 / p99 / max ms`,
      a ? lat(a) : '-',
      `${lat(e)} (appended p99 ${e.p99_ms_appended})`,
      a ? c(round(e.p99_ms / a.p99_ms, 2)) : '-',
      ...txn(e.relay_sends),
    ]);
  }
  const lines = markdownTable(rows);
  return `\ndelivery modes (exactly-once latency = until a read_committed consumer may see the record; load average 1 min ${r.env ? (r.env as { loadavg_1m_at_start: number }).loadavg_1m_at_start : '-'} at start):\n${lines.join('\n')}\n`;
}

/** write_side: the ways of writing the same workload side by side. */
function writeSideTable(
  ws: { seconds: number; concurrency: number; rounds: number; settings: Record<string, string>; variants: WriteSideResult[] },
  env: Record<string, unknown>,
): string {
  const label: Record<WriteSideVariant, string> = {
    none: 'orders row only (baseline)',
    table: 'outbox row (writeOutboxEvent)',
    message: 'message (writeOutboxEvent via message)',
    emit: 'message (outbox_tail.emit)',
  };
  const rows: string[][] = [
    [
      'write side',
      'txn/s',
      'backend CPU us/txn',
      'client CPU us/txn',
      'WAL B/txn',
      'event WAL B',
      'outbox left B/txn',
      'outbox left (last round)',
      'relay catch-up events/s (after startup)',
      'relay us/event',
      'catch-up peak RSS MB',
      'load 1m',
    ],
  ];
  const bytes = (b: number) => (b === 0 ? '0' : b < 1024 ** 2 ? `${Math.round(b / 1024)} kB` : `${round(b / 1024 ** 2, 1)} MB`);
  for (const v of ws.variants)
    rows.push([
      label[v.variant],
      String(v.transactions_per_sec),
      v.backend_us_per_txn === null ? '-' : String(v.backend_us_per_txn),
      String(v.client_us_per_txn),
      String(v.wal_bytes_per_txn),
      v.event_wal_bytes === null ? '-' : String(v.event_wal_bytes),
      String(v.outbox_bytes_per_txn),
      bytes(v.outbox_bytes_left),
      v.catchup ? `${v.catchup.events_per_sec} (${v.catchup.events_per_sec_after_startup}), --source ${v.variant === 'table' ? 'table' : 'messages'}` : '-',
      v.catchup?.relay_us_per_event != null ? String(v.catchup.relay_us_per_event) : '-',
      v.catchup ? String(v.catchup.peak_rss_mb) : '-',
      v.loadavg_1m.join(', '),
    ]);
  return [
    ...markdownTable(rows),
    `  ${ws.rounds} rounds of ${ws.seconds} s each way, in alternating order; ${ws.concurrency} clients as fast as they go, one order per transaction; server ${Object.entries(
      ws.settings,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}; load average (1 min) ${String(env.loadavg_1m_at_start)} at start, ${String(env.loadavg_1m_at_end)} at end`,
    '',
  ].join('\n');
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
