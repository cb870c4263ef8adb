import type { RelayState } from '../pipeline/relay-stats.js';
import type { Lsn } from '../shared/lsn.js';

export interface StallSample {
  now: number;
  state: RelayState;
  confirmedLsn: Lsn;
  /** Slot lag in bytes from pg_replication_slots; null when it could not be read. */
  lagBytes: number | null;
}

export interface StallVerdict {
  stalled: boolean;
  /** Why, for /healthz and the log; null while healthy. */
  reason: string | null;
  /** Set when the verdict changed with this sample. */
  changed: boolean;
}

/**
 * Stall = the slot lag grows and this relay confirmed nothing for
 * `timeoutMs`. A standby is never stalled (another relay owns the slot), and
 * an idle database (lag not growing) is not a stall however long nothing is
 * confirmed. Pure: fed by the slot poller.
 */
export class StallDetector {
  private lastLsn: Lsn | null = null;
  private progressAt: number;
  /** The lag at the first sample after the last progress: "growing" means above it. */
  private baseline: number | null = null;
  private stalled = false;
  private reasonText: string | null = null;

  constructor(
    private readonly timeoutMs: number,
    startedAt: number,
  ) {
    this.progressAt = startedAt;
  }

  get isStalled(): boolean {
    return this.stalled;
  }

  get reason(): string | null {
    return this.reasonText;
  }

  update(sample: StallSample): StallVerdict {
    if (this.lastLsn === null || sample.confirmedLsn !== this.lastLsn) {
      if (this.lastLsn !== null) this.progressAt = sample.now;
      this.lastLsn = sample.confirmedLsn;
      this.baseline = sample.lagBytes;
    } else if (this.baseline === null) {
      this.baseline = sample.lagBytes;
    }
    let stalled = this.stalled;
    let reason = this.reasonText;
    if (sample.state === 'standby' || sample.state === 'stopping' || sample.state === 'stopped') {
      stalled = false;
      reason = null;
    } else if (sample.lagBytes !== null && this.baseline !== null) {
      const idleMs = sample.now - this.progressAt;
      const growing = sample.lagBytes > this.baseline;
      stalled = growing && idleMs >= this.timeoutMs;
      reason = stalled
        ? `no confirm for ${Math.round(idleMs / 1000)} s while the slot lag grew from ${this.baseline} to ${sample.lagBytes} bytes (state ${sample.state})`
        : null;
    }
    // lag unknown (poll failed): keep the previous verdict
    const changed = stalled !== this.stalled;
    this.stalled = stalled;
    this.reasonText = reason;
    return { stalled, reason, changed };
  }
}
