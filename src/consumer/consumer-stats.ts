export type ConsumerState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** Counters an idempotent consumer keeps; read them for logs and metrics. Monotonic except `state`. */
export class ConsumerStats {
  state: ConsumerState = 'idle';
  /** Records whose handler ran and whose transaction committed. */
  processed = 0;
  /** Records skipped because their outbox id was already in processed_messages. */
  duplicatesSkipped = 0;
  /** Failed handler attempts (each rolled back); a record failing 3 times counts 3. */
  handlerFailures = 0;
  /** Records sent to the dead-letter topic (handler failures and poison records). */
  deadLettered = 0;
  /** Records that could not be decoded (no id header, value not JSON, parsePayload threw). */
  poisonRecords = 0;
  /** Transactions retried because of a transient database error (not counted against a record). */
  transientRetries = 0;
  /** Offset commits sent to Kafka. */
  offsetCommits = 0;
  /** Named topics the consumer waits for at start (they do not exist yet); empty once it joined. */
  topicsAwaited: string[] = [];
}
