// Public API of the outbox-tail package. Exports only: importing it has no side effects.

// The relay as a library: config, the supervisor, and the pieces it is wired from.
export { configSchema } from './config/config-schema.js';
export type { RelayConfig, ConfigInput } from './config/relay-config.js';
export { resolveConfig, redactConfig, type ConfigSources } from './config/resolve-config.js';
export { toRunConfig, type RunConfig } from './config/run-config.js';
export { Relay, type RelayOptions } from './relay/relay.js';
export { RelayStats, type RelayState } from './pipeline/relay-stats.js';
export { runDaemon } from './commands/run/run-daemon.js';
export { preflight, type PreflightOptions } from './relay/preflight.js';
export { initOutbox, type InitResult } from './commands/init/init.js';
export { createSlot } from './postgres/slots/slot-catalog.js';
export { migrate } from './postgres/migrator.js';
export { readSlotStatus, type SlotStatus } from './postgres/slots/slot-status.js';
export { Checkpointer } from './pipeline/checkpoint/checkpointer.js';
export { Lsn } from './shared/lsn.js';
export { decodePgoutput, type PgoutputMessage } from './pipeline/decode/pgoutput-decoder.js';
export type { ClusterMetadata, Sink } from './sink/sink.js';
export type { SinkRecord } from './sink/sink-record.js';
export { createKafkaSink, type SinkFactory } from './sink/create-sink.js';
export { KafkaSink } from './sink/kafkajs/kafka-sink.js';
export type { OutboxEvent, Transaction } from './pipeline/outbox-event.js';
// The table-less write path's content format, for writers that emit the message themselves.
export {
  DEFAULT_MESSAGE_PREFIX,
  MESSAGE_CONTENT_VERSION,
  MessageContent,
  type MessageEnvelope,
  type ParsedMessageContent,
  type UnparsableContent,
} from './pipeline/assemble/message-content.js';
export { OutboxTailError, EXIT, type ErrorCode } from './shared/outbox-tail-error.js';

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
