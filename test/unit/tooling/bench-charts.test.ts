import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chartSpecs, renderSvg, type BenchResultLike } from '../../../dev/bench/bench-charts.js';

/**
 * A recorded `npm run bench -- --compare debezium --json-out` run (see
 * docs/performance.md, Charts): the charts must carry its series and values.
 */
const recorded = JSON.parse(readFileSync(new URL('./bench-result-recorded.json', import.meta.url), 'utf8')) as Required<BenchResultLike>;

const svgOf = async (result: BenchResultLike, file: string) => {
  const chart = chartSpecs(result).find((c) => c.file === file);
  if (!chart) throw new Error(`no ${file} for this result`);
  return renderSvg(chart.spec);
};
const thousands = (n: number) => n.toLocaleString('en-US');
/** The text nodes of an SVG: what a reader of the chart sees. */
const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

describe('bench charts from a recorded run', () => {
  it('draws catch-up against the sink limit, kafka-producer-perf-test, the other limits and Debezium Server, each bar labelled with its value', async () => {
    const t = texts(await svgOf(recorded, 'catch-up.svg'));
    const bars: Array<[string, number]> = [
      ['outbox-tail catch-up, from spawn', recorded.catchup.events_per_sec],
      ['sink limit (kafkajs sink alone)', recorded.limits.kafka_events_per_sec!],
      ['kafka-producer-perf-test', recorded.limits.perf_test_events_per_sec!],
      ['decode limit (null sink)', recorded.limits.decode_events_per_sec!],
      ['machine ceiling', recorded.limits.machine_events_per_sec!],
    ];
    if (recorded.compare?.catchup)
      bars.push([expect.stringMatching(/^Debezium Server .*catch-up, from spawn$/) as unknown as string, recorded.compare.catchup.debezium!.events_per_sec]);
    for (const [label, value] of bars) {
      expect(t).toContainEqual(label);
      expect(t).toContain(thousands(value));
    }
  });

  it('draws p50, p99 and p99.9 at each steady rate for every publisher that ran', async () => {
    const t = texts(await svgOf(recorded, 'steady-latency.svg'));
    for (const p of ['p50', 'p99', 'p99.9']) expect(t).toContain(p);
    for (const s of recorded.steady) {
      expect(t).toContain(`${thousands(s.rate)}/s`);
      for (const ms of [s.p50_ms, s.p99_ms, s.p999_ms!]) expect(t).toContain(ms.toFixed(1));
    }
    expect(t).toContain('outbox-tail');
    if (recorded.compare?.steady?.length) {
      expect(t).toContain('Debezium Server');
      for (const { debezium } of recorded.compare.steady) expect(t).toContain(debezium!.p99_ms.toFixed(1));
    }
  });

  it('draws one RSS line per publisher run, named in the legend', async () => {
    const svg = await svgOf(recorded, 'rss.svg');
    const runs = ['outbox-tail catch-up', ...recorded.steady.map((s) => `outbox-tail steady ${s.rate}/s`)];
    if (recorded.compare?.catchup) runs.push('Debezium Server catch-up');
    for (const s of recorded.compare?.steady ?? []) runs.push(`Debezium Server steady ${s.rate}/s`);
    for (const run of runs) expect(texts(svg)).toContain(run);
    expect((svg.match(/aria-roledescription="line mark"/g) ?? []).length).toBe(runs.length);
  });

  it('leaves out what did not run: no Debezium without --compare, no latency chart without steady runs', async () => {
    const { compare: _compare, steady: _steady, ...withoutThem } = recorded;
    const charts = chartSpecs(withoutThem);
    expect(charts.map((c) => c.file)).toEqual(['catch-up.svg', 'rss.svg']);
    for (const c of charts) expect(await renderSvg(c.spec)).not.toContain('Debezium');
  });
});
