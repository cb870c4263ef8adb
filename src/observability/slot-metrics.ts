import { Counter, Gauge, type Registry } from 'prom-client';

/** pg_replication_slots.wal_status values, plus "missing" when the slot does not exist. */
export const WAL_STATUSES = ['reserved', 'extended', 'unreserved', 'lost', 'missing'] as const;

export interface SlotSample {
  exists: boolean;
  active: boolean;
  lagBytes: number | null;
  retainedWalBytes: number | null;
  walStatus: string | null;
  /** pg_replication_slots.safe_wal_size; null (or left out) when PostgreSQL reports none: no max_slot_wal_keep_size, or the slot lost. */
  safeWalSizeBytes?: number | null;
  /** max_slot_wal_keep_size in bytes, -1 = unlimited; null (or left out) when not read. */
  maxSlotWalKeepSizeBytes?: number | null;
  /** On a hot standby: WAL received from the primary and not replayed yet; null (or left out) on a primary. */
  standbyReplayLagBytes?: number | null;
}

/** What the slot poller and the stall detector report. */
export interface SlotMetrics {
  /** From the slot poller (a normal connection reading pg_replication_slots). */
  observeSlot(sample: SlotSample): void;
  slotPollFailed(): void;
  setStalled(stalled: boolean): void;
}

/** The slot's lag, retained WAL, wal_status, safe size and activity, and the poller's own health. */
export function slotMetrics(registry: Registry): SlotMetrics {
  const lag = new Gauge({
    name: 'outbox_tail_slot_lag_bytes',
    help: 'pg_current_wal_lsn() - confirmed_flush_lsn of the slot: WAL not yet confirmed',
    registers: [registry],
  });
  const retained = new Gauge({
    name: 'outbox_tail_slot_retained_wal_bytes',
    help: 'pg_current_wal_lsn() - restart_lsn of the slot: WAL the server keeps for it',
    registers: [registry],
  });
  const walStatus = new Gauge({
    name: 'outbox_tail_slot_wal_status',
    help: `pg_replication_slots.wal_status of the slot: 1 for the current value (${WAL_STATUSES.join(', ')}; missing = no such slot)`,
    labelNames: ['wal_status'],
    registers: [registry],
  });
  // Absent until known (and while PostgreSQL reports none), so that a rule comparing them never sees a made-up 0.
  const safeWalSize = new Gauge({
    name: 'outbox_tail_slot_safe_wal_size_bytes',
    help: 'pg_replication_slots.safe_wal_size: WAL that can still be written before the slot is lost (negative once unreserved); absent when max_slot_wal_keep_size is -1 or the slot is lost',
    registers: [registry],
  });
  const maxWalKeep = new Gauge({
    name: 'outbox_tail_slot_max_wal_keep_size_bytes',
    help: "The server's max_slot_wal_keep_size in bytes (-1 = unlimited): the most WAL the slot may retain before PostgreSQL invalidates it",
    registers: [registry],
  });
  const replayLag = new Gauge({
    name: 'outbox_tail_standby_replay_lag_bytes',
    help: "Decoding on a hot standby: WAL the standby received from the primary and has not replayed yet (pg_last_wal_receive_lsn() - pg_last_wal_replay_lsn()); what it adds to the relay's latency. Absent on a primary",
    registers: [registry],
  });
  const setOrRemove = (gauge: Gauge, value: number | null | undefined) => (value === null || value === undefined ? gauge.remove() : gauge.set(value));
  setOrRemove(safeWalSize, null);
  setOrRemove(maxWalKeep, null);
  const slotActive = new Gauge({ name: 'outbox_tail_slot_active', help: '1 when a walsender (this relay or another) holds the slot', registers: [registry] });
  const pollErrors = new Counter({ name: 'outbox_tail_slot_poll_errors_total', help: 'Failed reads of pg_replication_slots', registers: [registry] });
  const lastPoll = new Gauge({
    name: 'outbox_tail_slot_last_poll_timestamp_seconds',
    help: 'Unix time of the last successful slot poll',
    registers: [registry],
  });
  const stalled = new Gauge({
    name: 'outbox_tail_stalled',
    help: '1 while the slot lag grows and nothing was confirmed for --stall-timeout-ms',
    registers: [registry],
  });
  stalled.set(0);

  return {
    observeSlot(sample: SlotSample): void {
      lastPoll.set(Date.now() / 1000);
      slotActive.set(sample.active ? 1 : 0);
      const status = sample.exists ? (sample.walStatus ?? 'unknown') : 'missing';
      for (const s of WAL_STATUSES) walStatus.set({ wal_status: s }, s === status ? 1 : 0);
      if (sample.lagBytes !== null) lag.set(sample.lagBytes);
      if (sample.retainedWalBytes !== null) retained.set(sample.retainedWalBytes);
      setOrRemove(safeWalSize, sample.exists ? sample.safeWalSizeBytes : null);
      setOrRemove(maxWalKeep, sample.maxSlotWalKeepSizeBytes);
      setOrRemove(replayLag, sample.standbyReplayLagBytes);
    },
    slotPollFailed(): void {
      pollErrors.inc();
    },
    setStalled(value: boolean): void {
      stalled.set(value ? 1 : 0);
    },
  };
}
