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
 * transaction for the next batch instead of committing now? Only while a full
 * batch is queued (a backlog, where a commit per batch would slow the relay
 * down) and the Kafka transaction is younger than KAFKA_TRANSACTION_SPAN_MS.
 * With less queued it commits at once: under a steady rate each batch is its
 * own Kafka transaction, so nothing waits for records written after it.
 */
export function keepKafkaTransactionOpen(
  queued: { messages: number; bytes: number },
  openMs: number,
  limits: Pick<BatchLimits, 'batchMaxMessages' | 'batchMaxBytes'>,
): boolean {
  const fullBatchQueued = queued.messages >= limits.batchMaxMessages || queued.bytes >= limits.batchMaxBytes;
  return fullBatchQueued && openMs < KAFKA_TRANSACTION_SPAN_MS;
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
