import type { Registry } from 'prom-client';
import { cell, code, fillTemplate, generatedNotice, table } from './markdown.js';

export interface MetricsPageInput {
  /** The hand-written page with {{relay-metrics}}, {{consumer-metrics}} and {{buckets}} where the generated parts go. */
  template: string;
  sources: readonly string[];
  /** A registry holding only the relay's metrics (createRelayMetrics), and one with only the consumer's. */
  relay: Registry;
  consumer: Registry;
}

interface MetricInfo {
  name: string;
  type: string;
  help: string;
  labelNames: readonly string[];
  upperBounds?: readonly number[];
}

/** What prom-client keeps on each metric object (its typings name only name, help and type). */
function metricsOf(registry: Registry): MetricInfo[] {
  return (registry.getMetricsAsArray() as unknown as MetricInfo[])
    .map(({ name, type, help, labelNames, upperBounds }) => ({ name, type, help, labelNames: labelNames ?? [], ...(upperBounds ? { upperBounds } : {}) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function metricTable(metrics: readonly MetricInfo[]): string {
  return table(
    ['Metric', 'Type', 'Labels', 'Help'],
    metrics.map((m) => [code(m.name), m.type, m.labelNames.map(code).join(', '), cell(m.help)]),
  );
}

function bucketTable(metrics: readonly MetricInfo[]): string {
  return table(
    ['Histogram', 'Bucket upper bounds (le)'],
    metrics.filter((m) => m.upperBounds).map((m) => [code(m.name), m.upperBounds!.join(', ')]),
  );
}

/** docs/metrics.md: the template with the relay's and the consumer's metric tables filled in. Pure: same registries, same bytes. */
export function renderMetricsPage(input: MetricsPageInput): string {
  const relay = metricsOf(input.relay);
  const consumer = metricsOf(input.consumer);
  const body = fillTemplate('metrics template', input.template, {
    'relay-metrics': metricTable(relay),
    'consumer-metrics': metricTable(consumer),
    buckets: bucketTable([...relay, ...consumer]),
  });
  return `${generatedNotice(input.sources)}\n\n${body.trimEnd()}\n`;
}
