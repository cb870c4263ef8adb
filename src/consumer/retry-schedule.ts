import { backoffDelay } from '../shared/backoff.js';

/**
 * How many times a step is tried and how long to wait before the next try.
 * One schedule for the handler, the consumer's own statements and the
 * dead-letter producer, so `maxAttempts` and `backoff` mean the same for each.
 */
export class RetrySchedule {
  readonly maxAttempts: number;
  private readonly initialMs: number;
  private readonly maxMs: number;

  constructor(options: { maxAttempts?: number | undefined; backoff?: { initialMs?: number; maxMs?: number } | undefined }) {
    this.maxAttempts = options.maxAttempts ?? 5;
    this.initialMs = options.backoff?.initialMs ?? 200;
    // A maxMs below initialMs would shrink the first delay; the larger one wins.
    this.maxMs = Math.max(this.initialMs, options.backoff?.maxMs ?? 10_000);
  }

  /** Exponential with jitter, so consumers retrying the same outage do not hit the database in step. */
  delay(attempt: number): number {
    return backoffDelay(attempt, this.initialMs, this.maxMs);
  }
}
