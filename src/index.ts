// Public API of the outbox-tail package. Exports only: importing it has no side effects.

// Consumer side: idempotent consumer, processed-ids pruning, the typed outbox write path.
export * from './consumer/index.js';
