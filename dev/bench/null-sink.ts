import type { ClusterMetadata, Sink } from '../../src/sink/sink.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';

/**
 * A Sink that acknowledges every batch at once and keeps nothing but counts:
 * the relay's pipeline (decode, assemble, build records, checkpoint, confirm)
 * without Kafka, for the benchmark's decode limit. Bench code only: it never
 * becomes a relay option, because a sink that discards data must not be one
 * flag away in production.
 */
export class NullSink implements Sink {
  records = 0;
  batches = 0;
  bytes = 0;

  /** Preflight makes a sink too, and never connects it: only connected ones were sessions. */
  connected = false;

  async connect(): Promise<void> {
    this.connected = true;
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    this.batches++;
    this.records += records.length;
    for (const r of records) this.bytes += r.value.length;
  }

  async disconnect(): Promise<void> {}

  async metadata(): Promise<ClusterMetadata> {
    return { brokers: 0, topics: new Map() };
  }
}
