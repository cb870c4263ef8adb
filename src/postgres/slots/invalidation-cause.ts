/**
 * Why PostgreSQL invalidated a replication slot, and the setting to change so
 * it does not happen again. PostgreSQL 17+ records the cause in
 * pg_replication_slots.invalidation_reason; 15 and 16 only say wal_status =
 * 'lost' (16 adds `conflicting` for a slot on a standby whose rows were
 * removed), and there the cause is WAL removed past max_slot_wal_keep_size.
 */
export type InvalidationReason = 'wal_removed' | 'rows_removed' | 'wal_level_insufficient' | 'idle_timeout';

export interface InvalidationCause {
  /** PostgreSQL's name of the cause (invalidation_reason), or 'wal_removed' inferred from wal_status = lost before 17. */
  reason: InvalidationReason | string;
  /** Where the reason was read: invalidation_reason (17+), conflicting (16) or wal_status (15/16). */
  source: 'invalidation_reason' | 'conflicting' | 'wal_status';
  /** What happened, in words. */
  cause: string;
  /** The setting to change so the next slot is not invalidated the same way. */
  fix: string;
}

/** The slot columns the cause is read from; absent columns (older servers) are null. */
export interface SlotInvalidationColumns {
  walStatus: string | null;
  invalidationReason: string | null;
  conflicting: boolean | null;
}

const CAUSES: Record<InvalidationReason, Omit<InvalidationCause, 'reason' | 'source'>> = {
  wal_removed: {
    cause: 'the WAL the slot still needed was removed: the slot fell further behind than max_slot_wal_keep_size allows',
    fix: "raise max_slot_wal_keep_size above the WAL written during the relay's longest outage (ALTER SYSTEM SET max_slot_wal_keep_size = '<size>'; SELECT pg_reload_conf()), and alert on the slot's retained WAL (outbox-tail doctor estimates it)",
  },
  rows_removed: {
    cause: 'catalog rows the slot needed were removed (logical decoding on a standby whose primary vacuumed them)',
    fix: 'on the standby set hot_standby_feedback = on and primary_slot_name to a physical slot on the primary, so the primary keeps the rows decoding needs',
  },
  wal_level_insufficient: {
    cause: "wal_level on the primary is no longer 'logical', so the WAL lacks what logical decoding needs",
    fix: 'set wal_level = logical on the primary (ALTER SYSTEM SET wal_level = logical) and restart it',
  },
  idle_timeout: {
    cause: 'the slot stayed inactive (no relay connected) longer than idle_replication_slot_timeout and was invalidated at a checkpoint',
    fix: "raise idle_replication_slot_timeout above the relay's longest outage, or disable it (ALTER SYSTEM SET idle_replication_slot_timeout = 0; SELECT pg_reload_conf())",
  },
};

/** The cause of an invalidated slot, or null when the columns say it is not invalidated. */
export function invalidationCause(slot: SlotInvalidationColumns): InvalidationCause | null {
  if (slot.invalidationReason) {
    const known = CAUSES[slot.invalidationReason as InvalidationReason];
    return known
      ? { reason: slot.invalidationReason, source: 'invalidation_reason', ...known }
      : {
          reason: slot.invalidationReason,
          source: 'invalidation_reason',
          cause: `PostgreSQL invalidated the slot (invalidation_reason = ${slot.invalidationReason})`,
          fix: `see the PostgreSQL documentation of pg_replication_slots.invalidation_reason for '${slot.invalidationReason}'`,
        };
  }
  if (slot.conflicting === true) return { reason: 'rows_removed', source: 'conflicting', ...CAUSES.rows_removed };
  if (slot.walStatus === 'lost') return { reason: 'wal_removed', source: 'wal_status', ...CAUSES.wal_removed };
  return null;
}

/** One line for an error message: "invalidated: <reason> (<cause>)". */
export function describeInvalidation(slot: string, cause: InvalidationCause): string {
  return `replication slot ${slot} is invalidated (${cause.source} = ${cause.source === 'wal_status' ? 'lost' : cause.source === 'conflicting' ? 'true' : cause.reason}, cause ${cause.reason}): ${cause.cause}`;
}
