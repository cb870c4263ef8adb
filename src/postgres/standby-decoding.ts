/**
 * Whether the relay may decode on the server it was pointed at when that server is in recovery (issue 43), and if not,
 * why and the fix. PostgreSQL 16 allows a logical slot on a hot standby; what keeps it usable is the standby's
 * hot_standby_feedback through a physical slot on the primary (without both, the primary's VACUUM removes catalog
 * rows the slot needs and PostgreSQL invalidates it: conflicting / rows_removed). A synchronized failover slot (17+)
 * is a different thing: a copy that cannot stream until the standby is promoted, so the relay waits.
 */
export interface StandbyFacts {
  serverVersionNum: number;
  hotStandbyFeedback: boolean;
  /** primary_slot_name; '' when unset. */
  primarySlotName: string;
  /** pg_stat_wal_receiver.status; null when no receiver runs. */
  receiverStatus: string | null;
  /** The relay's slot on this server: null when absent; synced is null before 17. */
  slot: { synced: boolean | null } | null;
  /** sync_replication_slots (17+; false before): this standby copies failover slots from its primary. */
  syncReplicationSlots: boolean;
  /** --failover-slot: the relay's slot is a failover slot, so a standby is where it waits for a promotion. */
  failoverSlot: boolean;
}

export type StandbyVerdict =
  { kind: 'decode'; warnings: string[] } | { kind: 'wait-for-promotion'; reason: string } | { kind: 'refuse'; reason: string; fix: string };

export function standbyDecodingVerdict(facts: StandbyFacts): StandbyVerdict {
  if (facts.slot?.synced === true) {
    return {
      kind: 'wait-for-promotion',
      reason: 'the slot here is a failover copy synchronized from the primary: it streams once this standby is promoted',
    };
  }
  // A failover deployment (docs/operations.md, Failover slots): its standby relay waits, even before the first sync.
  if (facts.failoverSlot || (facts.syncReplicationSlots && facts.slot === null)) {
    return {
      kind: 'wait-for-promotion',
      reason: facts.failoverSlot
        ? 'the relay runs with --failover-slot: its slot streams here once this standby is promoted'
        : 'this standby synchronizes failover slots (sync_replication_slots = on) and has no copy of the slot yet: it streams here once the copy exists and the standby is promoted',
    };
  }
  if (facts.serverVersionNum < 160000) {
    return {
      kind: 'refuse',
      reason: 'logical decoding on a standby needs PostgreSQL 16 or later',
      fix: 'point --database-url at the primary, or upgrade the standby (and primary) to 16+',
    };
  }
  const missing: string[] = [];
  const fixes: string[] = [];
  if (!facts.hotStandbyFeedback) {
    missing.push('hot_standby_feedback is off');
    fixes.push('ALTER SYSTEM SET hot_standby_feedback = on; SELECT pg_reload_conf() (on the standby)');
  }
  if (facts.primarySlotName === '') {
    missing.push('primary_slot_name is not set (feedback without a physical slot is lost while the standby is disconnected)');
    fixes.push(
      "SELECT pg_create_physical_replication_slot('<name>') on the primary, then ALTER SYSTEM SET primary_slot_name = '<name>'; SELECT pg_reload_conf() on the standby",
    );
  }
  if (missing.length > 0) {
    return {
      kind: 'refuse',
      reason: `decoding on this standby would let the primary remove catalog rows its slot needs (the slot is then invalidated, rows_removed): ${missing.join('; ')}`,
      fix: fixes.join('; '),
    };
  }
  const warnings =
    facts.receiverStatus === 'streaming'
      ? []
      : [`the standby's WAL receiver is ${facts.receiverStatus ?? 'not running'}: nothing new reaches the slot until it streams`];
  return { kind: 'decode', warnings };
}
