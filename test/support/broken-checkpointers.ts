import { Checkpointer } from '../../src/pipeline/checkpoint/checkpointer.js';
import type { Transaction } from '../../src/pipeline/outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';

/**
 * Deliberately broken frontiers, built from the library's parts in test code
 * only. Every safety test must catch each of them.
 */

/** Confirms a transaction as soon as its Commit is received, before Kafka acked it. */
export class ConfirmOnReceiptCheckpointer extends Checkpointer {
  private received = Lsn.of(0n);
  override committed(txn: Transaction): void {
    super.committed(txn);
    if (txn.endLsn! > this.received) this.received = txn.endLsn!;
  }
  override get safeLsn(): Lsn {
    const safe = super.safeLsn;
    return safe > this.received ? safe : this.received;
  }
}

/** Confirms the commit end LSN + 1: skips a transaction whose commit record starts exactly there. */
export class ConfirmPastEndCheckpointer extends Checkpointer {
  override get safeLsn(): Lsn {
    const safe = super.safeLsn;
    return safe === 0n ? safe : Lsn.of(safe + 1n);
  }
}

/**
 * Confirms a finished transaction's commit LSN (the start of its commit record)
 * instead of its end, and no keepalive position: the last transaction is sent
 * again after every restart (the dbz#2004 shape: duplicates after a restart).
 */
export class ConfirmCommitStartCheckpointer extends Checkpointer {
  private lastEnd = Lsn.of(0n);
  private lastCommit = Lsn.of(0n);
  override committed(txn: Transaction): void {
    super.committed(txn);
    this.lastEnd = txn.endLsn!;
    this.lastCommit = txn.commitLsn;
  }
  override keepalive(): void {}
  override get safeLsn(): Lsn {
    const safe = super.safeLsn;
    return safe === this.lastEnd && safe !== 0n ? this.lastCommit : safe;
  }
}

export const VARIANTS = {
  correct: () => new Checkpointer(),
  'confirm-on-receipt': () => new ConfirmOnReceiptCheckpointer(),
  'confirm-end-plus-one': () => new ConfirmPastEndCheckpointer(),
  'confirm-commit-start': () => new ConfirmCommitStartCheckpointer(),
  /** The correct frontier behind a broken restart filter (test/support/broken-resume-filter.ts). */
  'skip-begin-at-resume-lsn': () => new Checkpointer(),
} as const;

/** A checkpointer variant, or one of broken-exactly-once.ts's (named here so this file stays free of sink imports). */
export type RelayVariant =
  | keyof typeof VARIANTS
  | 'watermark-after-commit'
  | 'confirm-before-commit'
  | 'skip-rule-off-by-one'
  | 'skip-rule-one-too-many'
  | 'slow-commit'
  | 'slow-commit-unfenced'
  | 'no-start-checks'
  | 'lanes-fenced-lazily'
  | 'same-epoch-after-error'
  | 'publish-non-transactional'
  | 'recover-without-backfill'
  // broken-pipeline.ts's:
  | 'pipeline-resend-behind'
  | 'wrapper-forgets-in-flight'
  // broken-credentials.ts's:
  | 'password-read-once'
  | 'token-never-refreshed'
  // broken-value-encoder.ts's:
  | 'encode-json-when-registry-down'
  // broken-zoo.ts's (the regression zoo):
  | 'skip-same-lsn-after-restart'
  | 'skip-change-at-resume-lsn'
  | 'confirm-streaming-position'
  | 'no-final-status-update'
  | 'trust-slot-position';
