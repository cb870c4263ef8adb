import type { Lsn } from '../replication/lsn.js';

export type RelayState = 'starting' | 'streaming' | 'standby' | 'reconnecting' | 'stopping' | 'stopped';

/** Counters the relay keeps for logs, the demo's progress line and metrics. */
export class RelayStats {
  state: RelayState = 'starting';
  eventsReceived = 0;
  recordsPublished = 0;
  deadLettered = 0;
  transactionsConfirmed = 0;
  batches = 0;
  confirmedLsn: Lsn = 0n;
  lastConfirmAt = 0;
  restarts: Record<string, number> = {};
}
