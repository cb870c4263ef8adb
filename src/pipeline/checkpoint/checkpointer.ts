import type { Transaction } from '../outbox-event.js';
import { Lsn } from '../../shared/lsn.js';

interface Entry {
  txn: Transaction;
  /** Items handed to the sink and not yet acknowledged by Kafka. */
  pending: number;
}

/**
 * The ack frontier (docs/architecture.md#lsn-rules, rules 1-5): the highest LSN that is safe to
 * confirm is the commit end LSN of the last transaction such that it and every
 * transaction before it (commit order) is committed and fully acknowledged.
 * Acks may arrive in any order; the frontier only moves contiguously.
 */
export class Checkpointer {
  private readonly entries: Entry[] = [];
  private head = 0;
  private readonly byTxn = new Map<Transaction, Entry>();
  private frontier: Lsn;
  /** Transactions behind the frontier, for metrics. */
  completed = 0;
  /**
   * Commit time (microseconds since 2000-01-01) of the last transaction behind
   * the frontier, null before the first: every transaction committed before it
   * in commit order is in Kafka. Kept outside PostgreSQL's slot so a lost slot
   * can be rebuilt from the table (outbox-tail recover).
   */
  frontierCommitTime: bigint | null = null;

  constructor(startLsn: Lsn = Lsn.of(0n)) {
    this.frontier = startLsn;
  }

  begin(txn: Transaction): void {
    const entry: Entry = { txn, pending: 0 };
    this.entries.push(entry);
    this.byTxn.set(txn, entry);
  }

  /** An item of `txn` was handed to the sink. */
  dispatched(txn: Transaction, count = 1): void {
    this.entry(txn).pending += count;
  }

  /** Kafka acknowledged `count` items of `txn`. */
  acknowledged(txn: Transaction, count = 1): void {
    const entry = this.entry(txn);
    if (entry.pending < count) throw new Error(`more acks than dispatched items for xid ${txn.xid}`);
    entry.pending -= count;
    this.advance();
  }

  /** The transaction's Commit was decoded (`txn.endLsn` is set). */
  committed(txn: Transaction): void {
    if (txn.endLsn === null) throw new Error(`committed() before endLsn was known for xid ${txn.xid}`);
    this.entry(txn);
    this.advance();
  }

  /** True when nothing is open or in flight: the only time a keepalive LSN may be confirmed. */
  get quiescent(): boolean {
    return this.head === this.entries.length;
  }

  /**
   * A keepalive reports the walsender's position. Confirming it is safe only
   * when every transaction we have seen is done, otherwise we could skip an
   * open one (docs/architecture.md#lsn-rules, rule 5).
   */
  keepalive(lsn: Lsn): void {
    if (this.quiescent) this.frontier = Lsn.max(this.frontier, lsn);
  }

  /** The LSN to send in the next standby status update. */
  get safeLsn(): Lsn {
    return this.frontier;
  }

  private entry(txn: Transaction): Entry {
    const entry = this.byTxn.get(txn);
    if (!entry) throw new Error(`unknown transaction xid ${txn.xid}`);
    return entry;
  }

  private advance(): void {
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head]!;
      if (entry.txn.endLsn === null || entry.pending > 0) break;
      this.frontier = Lsn.max(this.frontier, entry.txn.endLsn);
      this.frontierCommitTime = entry.txn.commitTime;
      this.byTxn.delete(entry.txn);
      this.head++;
      this.completed++;
    }
    // Compact occasionally so a long-running relay does not keep every entry.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }
}
