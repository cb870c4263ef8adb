import type { Logger } from 'pino';
import type { RelayConfig } from '../config/config-schema.js';

/** One record ready for Kafka. `value` is never re-serialised. */
export interface SinkRecord {
  topic: string;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  /** Approximate wire size, for batch and backpressure limits. */
  bytes: number;
}

/** What the brokers report to a metadata request. */
export interface ClusterMetadata {
  brokers: number;
  /** Partition count of each requested topic that exists; a missing topic is absent. */
  topics: Map<string, number>;
}

/**
 * Publishes records and resolves only when the broker acknowledged all of
 * them (acks=all). Order is kept per topic-partition. Any rejection means none
 * of the batch may be treated as acknowledged; the relay replays from the slot.
 * Everything outside the relay's publishing (preflight, health) reaches Kafka
 * through this interface too, so it talks to the brokers with the client and
 * the settings the relay publishes with.
 */
export interface Sink {
  connect(): Promise<void>;
  send(records: readonly SinkRecord[]): Promise<void>;
  disconnect(): Promise<void>;
  /**
   * Asks the brokers for metadata on a short-lived connection of its own
   * (before or without connect()), and rejects, classified, when they cannot
   * be reached or refuse the credentials. `topics` are looked up, never created.
   */
  metadata(topics?: readonly string[]): Promise<ClusterMetadata>;
}

/** Makes the sink of one replication session: after any Kafka failure the producer is recreated. */
export type SinkFactory = (config: RelayConfig, logger: Logger) => Sink;
