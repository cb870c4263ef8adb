import { Gauge, type Registry } from 'prom-client';
import { mirroredCounter } from './mirrored-counter.js';

/** What the consumer module's ConsumerStats holds (monotonic counters; `state` optional). */
export interface ConsumerStatsLike {
  processed: number;
  duplicatesSkipped: number;
  handlerFailures: number;
  deadLettered: number;
  poisonRecords?: number;
  transientRetries?: number;
  offsetCommits?: number;
  state?: string;
  topicsAwaited?: readonly string[];
}

const CONSUMER_STATES = ['idle', 'starting', 'running', 'stopping', 'stopped', 'failed'];

/**
 * Registers the idempotent consumer's counters in `registry`, read from its
 * stats object at scrape time. Call once per registry (prom-client refuses a
 * metric name twice); labels carry no ids or keys.
 */
export function registerConsumerMetrics(registry: Registry, stats: ConsumerStatsLike): void {
  const counters: Array<[string, string, () => number | undefined]> = [
    ['outbox_tail_consumer_processed_total', 'Records whose handler ran and whose database transaction committed', () => stats.processed],
    ['outbox_tail_consumer_duplicates_skipped_total', 'Records skipped because their outbox id was already processed', () => stats.duplicatesSkipped],
    ['outbox_tail_consumer_handler_failures_total', 'Failed handler attempts (each rolled back)', () => stats.handlerFailures],
    ['outbox_tail_consumer_dead_lettered_total', 'Records the consumer sent to its dead-letter topic', () => stats.deadLettered],
    ['outbox_tail_consumer_poison_records_total', 'Records that could not be decoded', () => stats.poisonRecords],
    ['outbox_tail_consumer_transient_retries_total', 'Transactions retried after a transient database error', () => stats.transientRetries],
    ['outbox_tail_consumer_offset_commits_total', 'Offset commits sent to Kafka', () => stats.offsetCommits],
  ];
  for (const [name, help, read] of counters) {
    if (read() !== undefined) mirroredCounter(registry, name, help, () => read() ?? 0);
  }
  if (stats.topicsAwaited !== undefined) {
    new Gauge({
      name: 'outbox_tail_consumer_topics_awaited',
      help: 'Named topics the consumer waits for at start because they do not exist yet (0 once it joined its group)',
      registers: [registry],
      collect() {
        this.set(stats.topicsAwaited?.length ?? 0);
      },
    });
  }
  if (stats.state !== undefined) {
    new Gauge({
      name: 'outbox_tail_consumer_state',
      help: `Consumer state: 1 for the current state, 0 for the others (${CONSUMER_STATES.join(', ')})`,
      labelNames: ['state'],
      registers: [registry],
      collect() {
        for (const state of CONSUMER_STATES) this.set({ state }, stats.state === state ? 1 : 0);
      },
    });
  }
}
