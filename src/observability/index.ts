export { registerConsumerMetrics, type ConsumerStatsLike } from './consumer-metrics.js';
export { startMetricsServer, type HealthReport, type MetricsServer } from './metrics-server.js';
export { RelayObservability } from './observability.js';
export { createRelayMetrics, type RelayMetrics } from './relay-metrics.js';
export { StallDetector } from './stall-detector.js';
