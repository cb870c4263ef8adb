import { Counter, Histogram, type Registry } from 'prom-client';
import type { RelayStats } from '../pipeline/relay-stats.js';
import { PgTimestamp } from '../postgres/pg-timestamp.js';

/**
 * Records acknowledged by Kafka, by topic, and their publish latency: through
 * RelayStats' per-record onPublished hook (chained to one set before), so the
 * relay counts without knowing about metrics.
 */
export function observePublished(registry: Registry, stats: RelayStats): void {
  // Counted per record in a plain map and handed to prom-client when it is read: its labelled inc() builds a label
  // hash string and validates the labels on every call, 2% of the relay's busy time in a catch-up profile.
  const publishedSinceRead = new Map<string, number>();
  new Counter({
    name: 'outbox_tail_records_published_total',
    help: 'Outbox records acknowledged by Kafka, by topic (dead-letter pointers excluded)',
    labelNames: ['topic'],
    registers: [registry],
    collect() {
      for (const [topic, n] of publishedSinceRead) this.inc({ topic }, n);
      publishedSinceRead.clear();
    },
  });
  const latency = new Histogram({
    name: 'outbox_tail_publish_latency_seconds',
    help: 'Time from the PostgreSQL commit to the Kafka acknowledgement, per record (clock skew between the hosts included)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  // Per-record hook: keep it cheap (a count per topic, handed to the counter when it is read).
  const previous = stats.onPublished;
  stats.onPublished = (topic, commitTimeMicros, deadLetter) => {
    previous?.(topic, commitTimeMicros, deadLetter);
    if (!deadLetter) publishedSinceRead.set(topic, (publishedSinceRead.get(topic) ?? 0) + 1);
    const commitMs = PgTimestamp.toUnixMs(commitTimeMicros);
    latency.observe(Math.max(0, Date.now() - commitMs) / 1000);
  };
}
