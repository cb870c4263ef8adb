/** The --batch-* options. */
export interface BatchLimits {
  readonly batchMaxMessages: number;
  readonly batchMaxBytes: number;
  readonly batchMaxWaitMs: number;
}

/** A queued entry as batching sees it; `record` null = cannot be sent (a malformed row under `fail`). */
export interface Batchable {
  readonly bytes: number;
  readonly record: object | null;
}

export interface BatchQueue {
  readonly length: number;
  peek(index: number): Batchable | undefined;
}

/**
 * How many entries from the head of the queue make the next Kafka request:
 * at most batchMaxMessages, no more than batchMaxBytes unless the first one
 * is larger on its own (it must go out some time), and never past an entry
 * that cannot be sent, so everything before a bad row is published and
 * confirmed before the relay halts on it.
 */
export function nextBatchSize(queue: BatchQueue, limits: Pick<BatchLimits, 'batchMaxMessages' | 'batchMaxBytes'>): number {
  let count = 0;
  let bytes = 0;
  while (count < queue.length && count < limits.batchMaxMessages) {
    const entry = queue.peek(count)!;
    if (entry.record === null) break;
    if (count > 0 && bytes + entry.bytes > limits.batchMaxBytes) break;
    bytes += entry.bytes;
    count++;
  }
  return count;
}

/** kafkajs has no linger: with --batch-max-wait-ms, wait once for a fuller batch, unless draining or already full. */
export function shouldWaitForFullerBatch(queued: number, draining: boolean, limits: Pick<BatchLimits, 'batchMaxMessages' | 'batchMaxWaitMs'>): boolean {
  return limits.batchMaxWaitMs > 0 && !draining && queued < limits.batchMaxMessages;
}

/** A queued entry as exactly-once batching sees it: which PostgreSQL transaction it belongs to. */
export interface TransactionBatchable extends Batchable {
  readonly txn: { readonly endLsn: unknown };
}

export interface TransactionBatchQueue {
  readonly length: number;
  peek(index: number): TransactionBatchable | undefined;
}

/** True when `last` is complete and nothing after it belongs to it: a Kafka transaction may end after it. */
export function endsTransaction(last: TransactionBatchable['txn'], next: TransactionBatchable | undefined): boolean {
  return last.endLsn !== null && next?.txn !== last;
}

/**
 * Exactly-once catch-up: how long one Kafka transaction may keep taking the
 * next batch while a full one is already queued, before it commits. Each
 * commit costs round trips of its own (the watermark's AddPartitionsToTxn and
 * produce, EndTxn) that a backlog would otherwise pay once per batch.
 */
export const KAFKA_TRANSACTION_SPAN_MS = 100;

/**
 * Exactly-once: at a PostgreSQL transaction boundary, keep the open Kafka
 * transaction for the next batch instead of committing now? Only in a backlog
 * and while the Kafka transaction is younger than KAFKA_TRANSACTION_SPAN_MS.
 * A backlog is a full batch queued, or something queued right after a batch
 * of at least half the limits: in a catch-up the sink empties the queue faster
 * than one thread decodes it, so a full batch is rarely queued, and without
 * the second rule every third batch paid a commit (1,613 records per Kafka
 * transaction, 0.74 x at-least-once). Under a steady rate the batches are far
 * smaller than half, so each is its own Kafka transaction and nothing waits
 * for records written after it.
 */
export function keepKafkaTransactionOpen(
  queued: { messages: number; bytes: number },
  openMs: number,
  limits: Pick<BatchLimits, 'batchMaxMessages' | 'batchMaxBytes'>,
  lastBatch: { messages: number; bytes: number } = { messages: 0, bytes: 0 },
): boolean {
  if (openMs >= KAFKA_TRANSACTION_SPAN_MS) return false;
  const fullBatchQueued = queued.messages >= limits.batchMaxMessages || queued.bytes >= limits.batchMaxBytes;
  const largeLastBatch = lastBatch.messages * 2 >= limits.batchMaxMessages || lastBatch.bytes * 2 >= limits.batchMaxBytes;
  return fullBatchQueued || (queued.messages > 0 && largeLastBatch);
}

/**
 * Exactly-once: the next batch ends at the last PostgreSQL transaction
 * boundary within nextBatchSize, so the Kafka transaction can commit after
 * it. Without a boundary (the head transaction is larger than a batch, or its
 * Commit has not arrived) the full batch goes out and the Kafka transaction
 * stays open: a PostgreSQL transaction is never split across two.
 */
export function transactionalBatchSize(queue: TransactionBatchQueue, limits: Pick<BatchLimits, 'batchMaxMessages' | 'batchMaxBytes'>): number {
  const count = nextBatchSize(queue, limits);
  for (let i = count - 1; i >= 0; i--) {
    if (endsTransaction(queue.peek(i)!.txn, queue.peek(i + 1))) return i + 1;
  }
  return count;
}
