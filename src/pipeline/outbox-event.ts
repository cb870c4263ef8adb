import type { Lsn } from '../shared/lsn.js';

/**
 * One committed transaction as the pipeline sees it. Rows of a large
 * transaction are published before its Commit arrives (docs/architecture.md#lsn-rules, rule 13),
 * so `endLsn` stays null until the Commit message is decoded.
 */
export interface Transaction {
  /** Position in commit order within one replication session. */
  readonly seq: number;
  readonly xid: number;
  /** LSN of the commit record (Begin's final_lsn); what consumers see as `commit_lsn`. */
  readonly commitLsn: Lsn;
  /** Microseconds since 2000-01-01, as in the protocol. */
  readonly commitTime: bigint;
  /** End of the commit record: the only LSN we ever confirm for this transaction. */
  endLsn: Lsn | null;
}

/** Where an event came from, kept out of the sink and checkpointer on purpose. */
export interface OutboxEvent {
  id: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  /** The payload bytes exactly as PostgreSQL sent them (jsonb text). */
  payload: Buffer;
  /** String entries of the `headers` column; other entries are dropped. */
  headers: Record<string, string>;
  /** Text as PostgreSQL sent it, or null when the table has no such column. */
  createdAt: string | null;
  /** "schema.table" the row came from; for an event written as a logical decoding message, its prefix. */
  table: string;
  txn: Transaction;
}

/** Where a malformed item came from when it was a logical decoding message rather than a table row. */
export interface MessageOrigin {
  prefix: string;
  /** The message's LSN, as pgoutput sends it: what an operator looks for in the WAL. */
  lsn: Lsn;
  /** false: written with pg_logical_emit_message(false, ...), sent even if its transaction rolled back. */
  transactional: boolean;
}

/** A row we could not turn into an event; routed by the `--on-malformed` policy. */
export interface MalformedRow {
  id: string | null;
  reason: string;
  table: string;
  txn: Transaction;
  /** Set for a logical decoding message; absent for a table row. */
  message?: MessageOrigin;
}

export type PipelineItem = { kind: 'event'; event: OutboxEvent } | { kind: 'malformed'; row: MalformedRow };
