import type { Sealed } from '../../sink/sink.js';

/**
 * Exactly-once: the sealed Kafka transaction whose EndTxn is pending. Its
 * records are acknowledged only once EndTxn succeeded (`committed` runs then);
 * if it failed, the failure is kept for the publisher to throw and nothing of
 * it counts. At most one is pending: the next seal waits for it (settle()).
 */
export class SealedCommit {
  private sealed: Promise<void> | null = null;
  private sealedPending = false;
  private commitFailure: unknown = null;

  /** `wake` is called when EndTxn failed, so a waiting publisher sees the failure at once. */
  constructor(private readonly wake: () => void) {}

  /** EndTxn has not settled yet (known without awaiting it). */
  get pending(): boolean {
    return this.sealedPending;
  }

  /** The first EndTxn that failed, or null. */
  get failure(): unknown {
    return this.commitFailure;
  }

  /** Tracks a sealed Kafka transaction; `committed` runs once its EndTxn succeeded. */
  track(sealed: Sealed, committed: () => void): void {
    this.sealedPending = true;
    const settled = sealed.committed.then(
      () => {
        this.sealedPending = false;
        committed();
      },
      (error: unknown) => {
        this.sealedPending = false;
        this.commitFailure ??= error;
        this.wake();
        throw error;
      },
    );
    // Awaited by settle() or reported through failure: never an unhandled rejection.
    settled.catch(() => undefined);
    this.sealed = settled;
  }

  /** Waits until the sealed Kafka transaction, if any, committed and its records are acknowledged; rejects if it failed. */
  async settle(): Promise<void> {
    const sealed = this.sealed;
    if (!sealed) return;
    await sealed;
    if (this.sealed === sealed) this.sealed = null;
  }
}
