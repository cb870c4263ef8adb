import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createRelayMetrics } from '../../../src/observability/relay-metrics.js';
import { RelayStats } from '../../../src/pipeline/relay-stats.js';

const commitMicros = () => BigInt(Date.now() - 946_684_800_000) * 1000n;

/** value of one sample line (name{labels} value) in the Prometheus text format. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('outbox_tail_records_published_total, counted per record and handed over when read', () => {
  it('keeps counting across scrapes: what was published between two reads is added, never lost or counted twice', async () => {
    const registry = new Registry();
    const stats = new RelayStats();
    createRelayMetrics(registry, stats);
    const order = 'outbox_tail_records_published_total{topic="outbox.event.order"}';

    for (let i = 0; i < 3; i++) stats.onPublished!('outbox.event.order', commitMicros(), false);
    expect(sample(await registry.metrics(), order)).toBe(3);
    // A read with nothing new changes nothing.
    expect(sample(await registry.metrics(), order)).toBe(3);
    for (let i = 0; i < 2; i++) stats.onPublished!('outbox.event.order', commitMicros(), false);
    stats.onPublished!('outbox.event.customer', commitMicros(), false);
    const text = await registry.metrics();
    expect(sample(text, order)).toBe(5);
    expect(sample(text, 'outbox_tail_records_published_total{topic="outbox.event.customer"}')).toBe(1);
    // The JSON reading (registry.getMetricsAsJSON) hands over the same way.
    stats.onPublished!('outbox.event.order', commitMicros(), false);
    const json = await registry.getMetricsAsJSON();
    const values = json.find((m) => m.name === 'outbox_tail_records_published_total')!.values;
    expect(values.find((v) => v.labels.topic === 'outbox.event.order')?.value).toBe(6);
  });
});
