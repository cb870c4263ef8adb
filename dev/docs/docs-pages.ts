import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { CONFIG_FILE_OPTION } from '../../src/cli/command-options.js';
import { COMMAND_SPECS } from '../../src/cli/command-registry.js';
import { configSchema } from '../../src/config/config-schema.js';
import { DEPRECATED_OPTIONS, optionSpecs, type ConfigObjectSchema } from '../../src/config/options.js';
import { registerConsumerMetrics, type ConsumerStatsLike } from '../../src/observability/consumer-metrics.js';
import { createRelayMetrics } from '../../src/observability/relay-metrics.js';
import { RelayStats } from '../../src/pipeline/relay-stats.js';
import { renderConfigurationPage, type ConfigurationPageInput } from './configuration-page.js';
import { renderMetricsPage, type MetricsPageInput } from './metrics-page.js';

/** The repository root: every path below is relative to it. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface GeneratedPage {
  /** Relative to the repository root, e.g. docs/metrics.md. */
  path: string;
  content: string;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const CONFIGURATION_TEMPLATE = 'dev/docs/templates/configuration.md';
const METRICS_TEMPLATE = 'dev/docs/templates/metrics.md';

/** Every field of ConsumerStatsLike present, so every consumer metric is registered (the compiler names a new one). */
const CONSUMER_STATS: Required<ConsumerStatsLike> = {
  processed: 0,
  duplicatesSkipped: 0,
  handlerFailures: 0,
  deadLettered: 0,
  poisonRecords: 0,
  transientRetries: 0,
  offsetCommits: 0,
  state: 'idle',
  topicsAwaited: [],
};

/** What docs/configuration.md is made of: the config schema, the deprecated names, the command table, the template. */
export function configurationPageInput(): ConfigurationPageInput {
  return {
    template: read(CONFIGURATION_TEMPLATE),
    sources: ['src/config/config-schema.ts', 'src/config/options.ts', 'src/cli/command-registry.ts', CONFIGURATION_TEMPLATE],
    options: optionSpecs(configSchema.in as unknown as ConfigObjectSchema),
    deprecated: DEPRECATED_OPTIONS,
    configFileOption: CONFIG_FILE_OPTION,
    commands: COMMAND_SPECS,
  };
}

/** What docs/metrics.md is made of: the registries as the relay and the consumer fill them (no server, no connection), the template. */
export function metricsPageInput(): MetricsPageInput {
  const relay = new Registry();
  createRelayMetrics(relay, new RelayStats());
  const consumer = new Registry();
  registerConsumerMetrics(consumer, CONSUMER_STATS);
  return {
    template: read(METRICS_TEMPLATE),
    sources: ['src/observability/relay-metrics.ts', 'src/observability/relay-state-metrics.ts', 'src/observability/published-metrics.ts', 'src/observability/kafka-request-metrics.ts', 'src/observability/slot-metrics.ts', 'src/observability/consumer-metrics.ts', METRICS_TEMPLATE],
    relay,
    consumer,
  };
}

/** The generated reference pages as they should be now, built from the code. */
export function docsPages(): GeneratedPage[] {
  return [
    { path: 'docs/configuration.md', content: renderConfigurationPage(configurationPageInput()) },
    { path: 'docs/metrics.md', content: renderMetricsPage(metricsPageInput()) },
  ];
}

/** The pages whose file differs from what generation gives now (a missing file is stale too). */
export function stalePages(pages: readonly GeneratedPage[], readCurrent: (path: string) => string | null): string[] {
  return pages.filter((page) => readCurrent(page.path) !== page.content).map((page) => page.path);
}
