import type { Watermark } from './watermark.js';
import type { SinkRecord } from './sink-record.js';

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
  /**
   * How many send() calls may be outstanding at once (1 when absent). Above 1
   * the sink guarantees, per topic-partition, that a later send's records are
   * never written unless every earlier send's records are, and that after a
   * rejected send every later one rejects too (docs/architecture.md#pipelined-produce-chain).
   */
  readonly maxInFlightRequests?: number;
  disconnect(): Promise<void>;
  /**
   * Asks the brokers for metadata on a short-lived connection of its own
   * (before or without connect()), and rejects, classified, when they cannot
   * be reached or refuse the credentials. `topics` are looked up, never created.
   */
  metadata(topics?: readonly string[]): Promise<ClusterMetadata>;
}

/** Where the last committed Kafka transaction ended, as the publishing stage knows it; the sink adds slot, transactional id and relay id. */
export type WatermarkPosition = Pick<Watermark, 'lsn' | 'commitLsn' | 'commitTime' | 'count'>;

/**
 * Exactly-once publishing (docs/architecture.md#exactly-once). connect()
 * fences every earlier producer of the transactional id (their open Kafka
 * transaction is aborted); send() adds records to the open Kafka transaction,
 * beginning one when none is open; commit() appends the watermark record and
 * commits, so the records and the position become visible together.
 */
export interface TransactionalSink extends Sink {
  readonly transactional: true;
  /** The slot's last committed watermark (read_committed), after checking the offsets topic and that the transactional id is this slot's. */
  readWatermark(): Promise<Watermark | null>;
  /**
   * Appends the watermark and commits the open Kafka transaction. `records`
   * (the Kafka transaction's last batch) go in the same produce request as the
   * watermark: a round trip less per commit.
   */
  commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void>;
  /**
   * commit() in two steps: resolves once the last batch and the watermark are
   * acknowledged, with `committed`, EndTxn's outcome. Meanwhile the next Kafka
   * transaction may begin and take records (on another lane), but it is never
   * sealed before `committed` resolved, and if `committed` rejects it never
   * commits. Nothing sealed counts as published until `committed` resolves.
   */
  seal(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<Sealed>;
  /** Drops the open Kafka transaction, if any (nothing of it becomes visible). */
  abort(): Promise<void>;
}

/** A sealed Kafka transaction: its EndTxn's outcome, wrapped so that awaiting seal() does not await the commit. */
export interface Sealed {
  readonly committed: Promise<void>;
}

export function isTransactional(sink: Sink): sink is TransactionalSink {
  return (sink as Partial<TransactionalSink>).transactional === true;
}
