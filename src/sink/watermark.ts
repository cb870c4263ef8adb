import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { Lsn } from '../shared/lsn.js';

/**
 * What one Kafka transaction says about the slot it came from, written as
 * the last record of that transaction (key = slot) to the compacted offsets
 * topic: it becomes visible exactly when the outbox records before it do.
 */
export interface Watermark {
  slot: string;
  /** Commit end LSN of the last PostgreSQL transaction published (or a quiescent keepalive position): everything up to it is in Kafka. */
  lsn: Lsn;
  /** Commit LSN (commit_lsn header) of that last transaction; null for a watermark written at a keepalive position. */
  commitLsn: Lsn | null;
  /** Commit time of that transaction, ISO 8601; null with commitLsn. */
  commitTime: string | null;
  /** Outbox records in this Kafka transaction. */
  count: number;
  transactionalId: string;
  /** Which relay process wrote it (host:pid), for the operator. */
  relayId: string;
}

/** The record value: JSON, LSNs as PostgreSQL text, so operators can read it with any console consumer. */
export function encodeWatermark(w: Watermark): Buffer {
  return Buffer.from(
    JSON.stringify({
      slot: w.slot,
      lsn: Lsn.format(w.lsn),
      commitLsn: w.commitLsn === null ? null : Lsn.format(w.commitLsn),
      commitTime: w.commitTime,
      count: w.count,
      transactionalId: w.transactionalId,
      relayId: w.relayId,
    }),
  );
}

/** Parses a record value of the offsets topic; a value we cannot read is an error, never a missing watermark (that would republish). */
export function decodeWatermark(value: Buffer, where: string): Watermark {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(value.toString('utf8')) as Record<string, unknown>;
    if (typeof raw.slot !== 'string' || typeof raw.lsn !== 'string' || typeof raw.transactionalId !== 'string')
      throw new Error('slot, lsn and transactionalId are required');
    return {
      slot: raw.slot,
      lsn: Lsn.parse(raw.lsn),
      commitLsn: typeof raw.commitLsn === 'string' ? Lsn.parse(raw.commitLsn) : null,
      commitTime: typeof raw.commitTime === 'string' ? raw.commitTime : null,
      count: typeof raw.count === 'number' ? raw.count : 0,
      transactionalId: raw.transactionalId,
      relayId: typeof raw.relayId === 'string' ? raw.relayId : '',
    };
  } catch (error) {
    throw new OutboxTailError('OFFSETS_TOPIC_INVALID', `${where}: unreadable watermark record (${(error as Error).message})`, {
      hint: 'the offsets topic must only be written by outbox-tail; remove the foreign record (a tombstone for its key) or use another --offsets-topic',
      cause: error,
    });
  }
}
