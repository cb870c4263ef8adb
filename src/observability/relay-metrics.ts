import type { Registry } from 'prom-client';
import type { RelayStats } from '../pipeline/relay-stats.js';
import type { Sink } from '../sink/sink.js';
import { kafkaRequestMetrics } from './kafka-request-metrics.js';
import { observePublished } from './published-metrics.js';
import { declareRelayStateMetrics } from './relay-state-metrics.js';
import { slotMetrics, type SlotMetrics } from './slot-metrics.js';

export interface RelayMetrics extends SlotMetrics {
  readonly registry: Registry;
  /** Wraps a sink to observe batches, their sizes and Kafka send time. */
  instrumentSink(sink: Sink): Sink;
}

/**
 * The relay's Prometheus metrics in `registry` (never the global one), read
 * from RelayStats at scrape time plus the per-record `onPublished` hook. No
 * outbox ids, keys or payloads ever become labels: the only labels are topic,
 * error code, connection state and wal_status.
 */
export function createRelayMetrics(registry: Registry, stats: RelayStats, options: { version?: string } = {}): RelayMetrics {
  declareRelayStateMetrics(registry, stats, options.version ?? 'unknown');
  observePublished(registry, stats);
  return { registry, instrumentSink: kafkaRequestMetrics(registry), ...slotMetrics(registry) };
}
