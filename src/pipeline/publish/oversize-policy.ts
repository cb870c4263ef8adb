import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { Transaction } from '../outbox-event.js';
import { Lsn } from '../../shared/lsn.js';
import type { BadRowPolicy } from './bad-row-policy.js';

export type OversizeDecision = { readonly action: 'dead-letter'; readonly topic: string } | { readonly action: 'halt' };

/**
 * A record Kafka refused on its own as too large. Under dead-letter an
 * outbox event is replaced by a small pointer on the dead-letter topic; a
 * record that already is a pointer (a malformed row's) has nowhere else to
 * go, so the relay halts, as it does under `fail`.
 */
export function oversizeDecision(policy: BadRowPolicy, isOutboxEvent: boolean): OversizeDecision {
  return policy.action === 'dead-letter' && isOutboxEvent ? { action: 'dead-letter', topic: policy.topic } : { action: 'halt' };
}

export interface OversizeRecord {
  id: string | null;
  bytes: number;
  topic: string;
  txn: Pick<Transaction, 'commitLsn'>;
}

export function oversizeError(record: OversizeRecord, cause: unknown): OutboxTailError {
  return new OutboxTailError(
    'MESSAGE_TOO_LARGE',
    `outbox row id=${record.id} (${record.bytes} bytes, topic ${record.topic}, commit LSN ${Lsn.format(record.txn.commitLsn)}) is larger than Kafka accepts; the slot is not confirmed past it`,
    {
      hint: "raise the broker's or topic's max.message.bytes, or run with --on-oversize=dead-letter --dead-letter-topic=<topic>",
      exitCode: EXIT.BAD_INPUT,
      cause,
    },
  );
}

/** Exactly-once: a record Kafka refuses as too large cannot be dead-lettered from inside a Kafka transaction; the relay halts. */
export function oversizeInTransactionError(cause: unknown): OutboxTailError {
  return new OutboxTailError('MESSAGE_TOO_LARGE', (cause as Error).message, {
    hint: "exactly-once delivery cannot dead-letter a record inside a Kafka transaction: raise the broker's or topic's max.message.bytes, or publish that row with --delivery at-least-once",
    cause,
  });
}
