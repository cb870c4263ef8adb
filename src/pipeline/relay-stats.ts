import type { FrontierPosition } from './checkpoint/position-recorder.js';
import { Lsn } from '../shared/lsn.js';

export type RelayState = 'starting' | 'streaming' | 'standby' | 'reconnecting' | 'stopping' | 'stopped';

/** Counters the relay keeps for logs, the demo's progress line and metrics. */
export class RelayStats {
  state: RelayState = 'starting';
  eventsReceived = 0;
  recordsPublished = 0;
  deadLettered = 0;
  transactionsConfirmed = 0;
  batches = 0;
  /** Exactly-once: Kafka transactions committed with records (keepalive watermarks excluded), and the PostgreSQL transactions they carried. */
  kafkaTransactions = 0;
  kafkaTransactionsPgTransactions = 0;
  confirmedLsn: Lsn = Lsn.of(0n);
  lastConfirmAt = 0;
  restarts: Record<string, number> = {};
  /** The streaming session's ack frontier (its checkpointer), null between sessions: what the position recorder writes. */
  frontier: FrontierPosition | null = null;
  /**
   * Called for every record Kafka acknowledged, with its topic and its
   * transaction's commit time (microseconds since 2000-01-01), so metrics can
   * observe publish latency without the relay knowing about metrics.
   */
  onPublished: ((topic: string, commitTimeMicros: bigint, deadLetter: boolean) => void) | null = null;
}
