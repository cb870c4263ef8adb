/** One record ready for Kafka. `value` is never re-serialised. */
export interface SinkRecord {
  topic: string;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  /** Approximate wire size, for batch and backpressure limits. */
  bytes: number;
}
