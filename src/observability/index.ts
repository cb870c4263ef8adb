export { registerConsumerMetrics, type ConsumerStatsLike } from './consumer-metrics.js';
export { isLoopback, parseListen, startMetricsServer, type HealthReport, type MetricsServer } from './metrics-server.js';
export { RelayObservability } from './observability.js';
export { createRelayMetrics, RELAY_STATES, WAL_STATUSES, type RelayMetrics, type SlotSample } from './relay-metrics.js';
export { SlotMonitor } from './slot-monitor.js';
export { StallDetector, type StallSample, type StallVerdict } from './stall-detector.js';
