/**
 * SVG charts of one bench run (`npm run bench -- --plot`, or
 * `--plot-from results.json` to draw a recorded run again): Vega-Lite specs
 * built from the run's JSON, rendered to SVG by Vega headless (no browser, no
 * canvas: renderer 'none' and toSVG()).
 *
 *   catch-up.svg        catch-up events/s against the limits measured in the same run
 *                       (the relay's sink alone, kafka-producer-perf-test, decode, machine)
 *                       and, when they ran, exactly-once, the --compare peer (Debezium Server
 *                       or Conduit) and polling;
 *   steady-latency.svg  p50 / p99 / p99.9 at each steady rate, per publisher;
 *   rss.svg             each publisher's RSS over time, from spawn.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** The parts of run-bench.ts's JSON the charts read (all optional: a run has the scenarios it was given). */
interface CatchupLike {
  events_per_sec: number;
  events_per_sec_after_startup?: number;
  peak_rss_mb?: number;
  rss_mb_over_time?: Array<[number, number]>;
}
interface SteadyLike {
  rate: number;
  p50_ms: number;
  p99_ms: number;
  p999_ms?: number;
  rss_mb_over_time?: Array<[number, number]>;
}
export interface BenchResultLike {
  catchup?: CatchupLike;
  limits?: {
    decode_events_per_sec?: number;
    kafka_events_per_sec?: number;
    perf_test_events_per_sec?: number;
    machine_events_per_sec?: number;
  };
  steady?: SteadyLike[];
  exactly_once?: { catchup?: CatchupLike; steady?: SteadyLike[] };
  polling_baseline?: { catchup_events_per_sec?: number; steady?: SteadyLike[] };
  /** --compare: the peer's results under its name (debezium or conduit). */
  compare?: {
    debezium?: { version?: string };
    conduit?: { version?: string };
    catchup?: { outbox_tail: CatchupLike; debezium?: CatchupLike; conduit?: CatchupLike };
    steady?: Array<{ rate: number; debezium?: SteadyLike; conduit?: SteadyLike }>;
  };
  env?: { kafka_client?: string; cpus?: number; cpu_model?: string; events?: number; steady_seconds?: number; loadavg_1m_at_start?: number };
}

export interface Chart {
  file: string;
  spec: TopLevelSpec;
}

const WIDTH = 560;

/** What the charts say about the machine and the run, under each title. */
function subtitle(r: BenchResultLike): string {
  const e = r.env ?? {};
  return [
    e.cpus !== undefined ? `${e.cpus} cores${e.cpu_model ? ` (${e.cpu_model.trim()})` : ''}` : null,
    e.kafka_client ? `relay on ${e.kafka_client}` : null,
    e.loadavg_1m_at_start !== undefined ? `load ${e.loadavg_1m_at_start} at start` : null,
    'one run, side by side',
  ]
    .filter(Boolean)
    .join(', ');
}

/** The --compare peer of a run, if one ran: its key in `compare` and its name on the charts. */
function peerOf(r: BenchResultLike): { key: 'debezium' | 'conduit'; name: string } | null {
  const c = r.compare;
  if (c?.conduit) return { key: 'conduit', name: `Conduit${c.conduit.version ? ` ${c.conduit.version}` : ''}` };
  if (c?.debezium || c?.catchup?.debezium || c?.steady?.some((s) => s.debezium))
    return { key: 'debezium', name: `Debezium Server${c.debezium?.version ? ` ${c.debezium.version}` : ''}` };
  return null;
}

const KIND_COLOURS: Record<string, string> = { 'outbox-tail': '#1f77b4', limit: '#9e9e9e', 'other relay': '#ff7f0e' };

type Bar = { what: string; kind: string; events_per_sec: number };

/** Catch-up events/s and every limit of the same run, as labelled horizontal bars. */
function catchupChart(r: BenchResultLike): Chart | null {
  const bars: Bar[] = [];
  const add = (what: string, kind: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) bars.push({ what, kind, events_per_sec: v });
  };
  const client = r.env?.kafka_client ?? 'kafkajs';
  add('outbox-tail catch-up, from spawn', 'outbox-tail', r.catchup?.events_per_sec);
  add('outbox-tail catch-up, after start-up', 'outbox-tail', r.catchup?.events_per_sec_after_startup);
  add('outbox-tail exactly-once, from spawn', 'outbox-tail', r.exactly_once?.catchup?.events_per_sec);
  add(`sink limit (${client} sink alone)`, 'limit', r.limits?.kafka_events_per_sec);
  add('kafka-producer-perf-test', 'limit', r.limits?.perf_test_events_per_sec);
  add('decode limit (null sink)', 'limit', r.limits?.decode_events_per_sec);
  add('machine ceiling', 'limit', r.limits?.machine_events_per_sec);
  const peer = peerOf(r);
  const peerCatchup = peer ? r.compare?.catchup?.[peer.key] : undefined;
  add(`${peer?.name} catch-up, from spawn`, 'other relay', peerCatchup?.events_per_sec);
  add(`${peer?.name} catch-up, after start-up`, 'other relay', peerCatchup?.events_per_sec_after_startup);
  add('polling publisher catch-up', 'other relay', r.polling_baseline?.catchup_events_per_sec);
  if (bars.length === 0) return null;
  const kinds = Object.keys(KIND_COLOURS).filter((k) => bars.some((b) => b.kind === k));
  return {
    file: 'catch-up.svg',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: {
        text: `Catch-up of ${r.env?.events?.toLocaleString('en-US') ?? 'the'} single-row transactions against the limits, events/s`,
        subtitle: subtitle(r),
      },
      width: WIDTH,
      data: { values: bars },
      encoding: {
        y: { field: 'what', type: 'nominal', sort: null, title: null, axis: { labelLimit: 400 } },
        x: { field: 'events_per_sec', type: 'quantitative', title: 'events/s' },
      },
      layer: [
        {
          mark: { type: 'bar' },
          encoding: {
            color: {
              field: 'kind',
              type: 'nominal',
              title: null,
              scale: { domain: kinds, range: kinds.map((k) => KIND_COLOURS[k]!) },
            },
          },
        },
        { mark: { type: 'text', align: 'left', dx: 3 }, encoding: { text: { field: 'events_per_sec', type: 'quantitative', format: ',d' } } },
      ],
    },
  };
}

type LatencyPoint = { publisher: string; rate: string; percentile: string; ms: number };

/** p50 / p99 / p99.9 at each steady rate, one panel per percentile, one bar per publisher. */
function latencyChart(r: BenchResultLike): Chart | null {
  const points: LatencyPoint[] = [];
  const add = (publisher: string, runs: SteadyLike[] | undefined) => {
    for (const s of runs ?? []) {
      const rate = `${s.rate.toLocaleString('en-US')}/s`;
      points.push({ publisher, rate, percentile: 'p50', ms: s.p50_ms }, { publisher, rate, percentile: 'p99', ms: s.p99_ms });
      if (s.p999_ms !== undefined) points.push({ publisher, rate, percentile: 'p99.9', ms: s.p999_ms });
    }
  };
  add('outbox-tail', r.steady);
  add('outbox-tail exactly-once', r.exactly_once?.steady);
  const peer = peerOf(r);
  // The peer's name without its version, as before: the legend stays short.
  if (peer)
    add(
      peer.key === 'conduit' ? 'Conduit' : 'Debezium Server',
      r.compare?.steady?.flatMap((s) => s[peer.key] ?? []),
    );
  add('polling publisher', r.polling_baseline?.steady);
  if (points.length === 0) return null;
  return {
    file: 'steady-latency.svg',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: 'Steady writer: latency from INSERT to Kafka (LogAppendTime), ms, symlog scale', subtitle: subtitle(r) },
      data: { values: points },
      facet: { column: { field: 'percentile', type: 'ordinal', sort: ['p50', 'p99', 'p99.9'], title: null } },
      spec: {
        width: 180,
        height: 240,
        encoding: {
          x: { field: 'rate', type: 'ordinal', sort: null, title: 'writer rate' },
          xOffset: { field: 'publisher', type: 'nominal', sort: null },
          y: { field: 'ms', type: 'quantitative', scale: { type: 'symlog' }, title: 'ms' },
        },
        layer: [
          { mark: 'bar', encoding: { color: { field: 'publisher', type: 'nominal', sort: null, title: null } } },
          { mark: { type: 'text', baseline: 'bottom', dy: -2, fontSize: 8 }, encoding: { text: { field: 'ms', type: 'quantitative', format: '.1f' } } },
        ],
      },
    },
  };
}

type RssPoint = { run: string; seconds: number; mb: number };

/** Each publisher's RSS from spawn, every 250 ms: catch-up and steady runs, log scale (Debezium's JVM is ten times the relay). */
function rssChart(r: BenchResultLike): Chart | null {
  const points: RssPoint[] = [];
  const add = (run: string, series: Array<[number, number]> | undefined) => {
    for (const [seconds, mb] of series ?? []) if (mb > 0) points.push({ run, seconds, mb });
  };
  add('outbox-tail catch-up', r.catchup?.rss_mb_over_time);
  add('outbox-tail exactly-once catch-up', r.exactly_once?.catchup?.rss_mb_over_time);
  for (const s of r.steady ?? []) add(`outbox-tail steady ${s.rate}/s`, s.rss_mb_over_time);
  for (const s of r.exactly_once?.steady ?? []) add(`outbox-tail exactly-once steady ${s.rate}/s`, s.rss_mb_over_time);
  const peer = peerOf(r);
  if (peer) {
    const name = peer.key === 'conduit' ? 'Conduit' : 'Debezium Server';
    add(`${name} catch-up`, r.compare?.catchup?.[peer.key]?.rss_mb_over_time);
    for (const s of r.compare?.steady ?? []) add(`${name} steady ${s.rate}/s`, s[peer.key]?.rss_mb_over_time);
  }
  if (points.length === 0) return null;
  return {
    file: 'rss.svg',
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: 'Resident set size (VmRSS) over time from spawn, MB, log scale', subtitle: subtitle(r) },
      width: WIDTH,
      height: 280,
      data: { values: points },
      mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x: { field: 'seconds', type: 'quantitative', title: 'seconds since spawn' },
        y: { field: 'mb', type: 'quantitative', scale: { type: 'log' }, title: 'RSS, MB' },
        color: { field: 'run', type: 'nominal', sort: null, title: null, legend: { labelLimit: 300 } },
      },
    },
  };
}

/** The Vega-Lite specs of the charts this run has data for. */
export function chartSpecs(result: BenchResultLike): Chart[] {
  return [catchupChart(result), latencyChart(result), rssChart(result)].filter((c): c is Chart => c !== null);
}

/** One Vega-Lite spec rendered to SVG, headless. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Writes every chart of `result` as SVG into `dir` (created if missing); returns the paths written. */
export async function writeCharts(result: BenchResultLike, dir: string, prefix = 'bench-'): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const chart of chartSpecs(result)) {
    const file = join(dir, `${prefix}${chart.file}`);
    writeFileSync(file, `${await renderSvg(chart.spec)}\n`);
    written.push(file);
  }
  return written;
}
