/** One record ready for Kafka. `value` is never re-serialised. */
export interface SinkRecord {
  topic: string;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  /** Approximate wire size, for batch and backpressure limits. */
  bytes: number;
}

/**
 * Publishes records and resolves only when the broker acknowledged all of
 * them (acks=all). Order is kept per topic-partition. Any rejection means none
 * of the batch may be treated as acknowledged; the relay replays from the slot.
 */
export interface Sink {
  connect(): Promise<void>;
  send(records: readonly SinkRecord[]): Promise<void>;
  disconnect(): Promise<void>;
}
