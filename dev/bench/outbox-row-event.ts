/**
 * Outbox rows read back with SQL, as the bench's own publishers (the Kafka
 * limit and the polling baseline) need them: the columns as text, and the
 * OutboxEvent the relay's RecordBuilder takes. Payload and headers stay the
 * text PostgreSQL returns, so these publishers forward the same bytes the
 * relay does.
 */
import type { OutboxEvent, Transaction } from '../../src/pipeline/outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';

export interface OutboxRowText {
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  payload: string;
  headers: string | null;
  created_at: string;
}

/** The select list that yields an OutboxRowText. */
export const OUTBOX_ROW_COLUMNS =
  'id::text, aggregate_type, aggregate_id, event_type, payload::text as payload, headers::text as headers, created_at::text as created_at';

/** Rows read with SQL have no commit LSN; this one gives the commit_lsn header its usual width. */
export const BENCH_TXN: Transaction = { seq: 1, xid: 1, commitLsn: Lsn.of(0x1_a2b3c4d5n), commitTime: 0n, endLsn: null };

export function rowEvent(row: OutboxRowText, table: string, txn: Transaction = BENCH_TXN): OutboxEvent {
  return {
    id: row.id,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    eventType: row.event_type,
    payload: Buffer.from(row.payload),
    headers: row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {},
    createdAt: row.created_at,
    table,
    txn,
  };
}
