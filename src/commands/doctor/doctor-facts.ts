import type { SlotStatus } from '../../postgres/slots/slot-status.js';

/** What the doctor read from PostgreSQL; every check is a pure function of these facts. */
export interface PostgresFacts {
  serverVersion: string;
  serverVersionNum: number;
  database: string;
  user: string;
  inRecovery: boolean;
  /** In recovery: what decoding on this standby depends on (PostgreSQL 16+); null on a primary. */
  standbyDecoding: {
    hotStandbyFeedback: boolean;
    primarySlotName: string;
    syncReplicationSlots: boolean;
    receiverStatus: string | null;
  } | null;
  walLevel: string;
  /** The doctor's own connection as pg_stat_ssl shows it: null when not encrypted. */
  tls: { version: string; cipher: string } | null;
  /** The host the connection went to (a Unix socket's directory starts with /). */
  host: string;
  /** max_slot_wal_keep_size in bytes; null when unbounded (-1). */
  maxSlotWalKeepSizeBytes: number | null;
  /** idle_replication_slot_timeout in seconds (0 = off); null where the server has no such setting (before 18). */
  idleReplicationSlotTimeoutSeconds: number | null;
  /** synchronized_standby_slots (PostgreSQL 17+; null before), with the state of every slot it names. */
  synchronizedStandbySlots: { setting: string; slots: { name: string; exists: boolean; physical: boolean; active: boolean }[] } | null;
  walRate: WalRate;
  slot: SlotStatus;
  /** pg_publication.pubinsert, pubupdate, pubdelete, pubtruncate (null when the publication is missing). */
  publicationActions: { insert: boolean; update: boolean; delete: boolean; truncate: boolean } | null;
  role: {
    superuser: boolean;
    replication: boolean;
    /** SELECT on the outbox table (null: no such table). */
    selectOutbox: boolean | null;
    /** SELECT, INSERT, UPDATE on outbox_tail_relay_position (null: no such table). */
    writePosition: boolean | null;
    /** EXECUTE on pg_logical_emit_message(boolean, text, text), the heartbeat's function. */
    emitMessage: boolean;
  };
  /** Distinct values of the topic template's placeholders among the newest outbox rows (for the topic names). */
  templateValues: { aggregateType: string; eventType: string }[];
}

/**
 * The WAL write rate, estimated two ways: pg_current_wal_lsn() sampled over a
 * short interval (what the server writes now), and pg_stat_wal.wal_bytes since
 * its stats_reset (the long-run average). The larger one sizes max_slot_wal_keep_size.
 */
export interface WalRate {
  sampleBytesPerSecond: number;
  sampleMs: number;
  averageBytesPerSecond: number | null;
  averageOverSeconds: number | null;
}

/** A standby's settings that failover slots depend on (--standby-url). */
export interface StandbyFacts {
  inRecovery: boolean;
  syncReplicationSlots: string | null;
  hotStandbyFeedback: string;
  primarySlotName: string;
  /** The relay's slot on the standby: null when absent; synced = a synchronized copy of the primary's. */
  slot: { synced: boolean | null; invalidationReason: string | null } | null;
}

export interface KafkaTopicFacts {
  name: string;
  exists: boolean;
  partitions: number | null;
  /** Replicas of partition 0. */
  replicationFactor: number | null;
  minInsyncReplicas: number | null;
  /** retention.ms; -1 = forever. */
  retentionMs: number | null;
  cleanupPolicy: string | null;
  /** compression.type: producer (keep the producer's codec) or a codec the broker recompresses to. */
  compressionType: string | null;
}

export interface KafkaFacts {
  brokers: number;
  /** The topics the template produces for the outbox's rows (and the dead-letter topic). */
  topics: KafkaTopicFacts[];
  offsetsTopic: KafkaTopicFacts;
  /** The controller's (or first broker's) transaction.max.timeout.ms. */
  transactionMaxTimeoutMs: number | null;
}

/** What the doctor checks against: the same config as `run`, plus the doctor's own options. */
export interface DoctorOptions {
  /** The longest relay outage to survive: the slot must keep this much WAL. */
  maxDowntimeMs: number;
  walSampleMs: number;
  /** The window Kafka must still hold records for (verify, replay --only-missing, consumers catching up). */
  recoveryWindowMs: number;
  /** prune's --older-than, when prune runs. */
  pruneOlderThanMs: number | null;
  /** The partition count every outbox topic must have, when given. */
  partitions: number | null;
  standbyUrl: string | null;
}
