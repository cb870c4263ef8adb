export {
  createIdempotentConsumer,
  type ConsumerDatabase,
  type EventHandler,
  type FailurePolicy,
  type IdempotentConsumer,
  type IdempotentConsumerOptions,
} from './idempotent-consumer.js';
export { decodeRecord, type ConsumedEvent, type PoisonRecord } from './consumed-event.js';
export { ConsumerStats, type ConsumerState } from './consumer-stats.js';
export { DEFAULT_PROCESSED_TABLE, pruneProcessedMessages, type PruneOptions, type Queryable } from './processed-messages.js';
export {
  DEFAULT_OUTBOX_COLUMNS,
  DEFAULT_OUTBOX_TABLE,
  writeOutboxEvent,
  type OutboxColumns,
  type OutboxEventInput,
  type WriteOutboxEventOptions,
} from './write-outbox-event.js';
