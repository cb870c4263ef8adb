// Public API of the outbox-tail package. Exports only: importing it has no side effects.

// Consumer side: idempotent consumer, processed-ids pruning, the typed outbox write path.
export * from './consumer/index.js';

// Operations: Prometheus metrics (a private registry per process), health endpoints, stall detection.
export {
  createRelayMetrics,
  registerConsumerMetrics,
  RelayObservability,
  StallDetector,
  startMetricsServer,
  type ConsumerStatsLike,
  type HealthReport,
  type MetricsServer,
  type RelayMetrics,
} from './observability/index.js';
