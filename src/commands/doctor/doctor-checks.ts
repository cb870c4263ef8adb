import type { DoctorSettings } from './doctor-settings.js';
import { kafkaTransport, postgresTransport } from '../../config/transport-security.js';
import { standbyDecodingVerdict } from '../../postgres/standby-decoding.js';
import { EXIT } from '../../shared/outbox-tail-error.js';
import type { DoctorOptions, KafkaFacts, KafkaTopicFacts, PostgresFacts, StandbyFacts } from './doctor-facts.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One row of the doctor's report: what was checked, what was found, and the fix (a command or a setting) when not ok. */
export interface CheckResult {
  check: string;
  status: CheckStatus;
  found: string;
  fix: string | null;
}

const ok = (check: string, found: string): CheckResult => ({ check, status: 'ok', found, fix: null });
const warn = (check: string, found: string, fix: string): CheckResult => ({ check, status: 'warn', found, fix });
const fail = (check: string, found: string, fix: string): CheckResult => ({ check, status: 'fail', found, fix });

const GB = 1024 ** 3;
const MB = 1024 ** 2;

export function formatBytes(bytes: number): string {
  if (bytes >= GB) return `${(bytes / GB).toFixed(1)} GB`;
  if (bytes >= MB) return `${(bytes / MB).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${Math.round(bytes)} B`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 86_400 === 0 && s > 0) return `${s / 86_400}d`;
  if (s % 3_600 === 0 && s > 0) return `${s / 3_600}h`;
  if (s % 60 === 0 && s > 0) return `${s / 60}m`;
  return `${s}s`;
}

const reload = 'SELECT pg_reload_conf()';

export function checkWalLevel(pg: PostgresFacts): CheckResult {
  const name = 'wal_level';
  if (pg.walLevel === 'logical') return ok(name, 'logical');
  return fail(name, `${pg.walLevel}: logical decoding needs logical`, 'ALTER SYSTEM SET wal_level = logical; then restart PostgreSQL');
}

/** The WAL the slot must keep through --max-downtime: the larger of the sampled and the long-run rate, times the window. */
export function walNeeded(pg: PostgresFacts, options: DoctorOptions): { rate: number; bytes: number } {
  const rate = Math.max(pg.walRate.sampleBytesPerSecond, pg.walRate.averageBytesPerSecond ?? 0);
  return { rate, bytes: (rate * options.maxDowntimeMs) / 1000 };
}

/** A size to set: twice what --max-downtime needs, at least 1 GB, rounded up to whole GB. */
export function suggestedKeepSize(neededBytes: number): string {
  return `${Math.max(1, Math.ceil((neededBytes * 2) / GB))}GB`;
}

export function checkMaxSlotWalKeepSize(pg: PostgresFacts, options: DoctorOptions): CheckResult {
  const name = 'max_slot_wal_keep_size';
  const { rate, bytes } = walNeeded(pg, options);
  const window = formatDuration(options.maxDowntimeMs);
  const estimate = `WAL rate ~${formatBytes(rate)}/s (max of a ${formatDuration(pg.walRate.sampleMs)} sample of pg_current_wal_lsn() and pg_stat_wal's average), ~${formatBytes(bytes)} in --max-downtime ${window}`;
  const fix = `ALTER SYSTEM SET max_slot_wal_keep_size = '${suggestedKeepSize(bytes)}'; ${reload}`;
  const keep = pg.maxSlotWalKeepSizeBytes;
  if (keep === null) {
    return warn(name, `-1 (unbounded): a stopped or stuck relay's slot keeps WAL until the disk is full; ${estimate}`, fix);
  }
  if (keep < bytes) {
    return fail(name, `${formatBytes(keep)}, less than the WAL of --max-downtime ${window}: a relay down that long loses its slot; ${estimate}`, fix);
  }
  const retained = pg.slot.retainedWalBytes;
  if (retained !== null && retained > keep / 2) {
    return warn(
      name,
      `${formatBytes(keep)}, and slot ${pg.slot.slot} already retains ${formatBytes(retained)} of it (lag ${formatBytes(pg.slot.lagBytes ?? 0)})`,
      `${fix}; and find why the relay is behind (outbox-tail status, its logs)`,
    );
  }
  return ok(name, `${formatBytes(keep)}; ${estimate}`);
}

export function checkIdleReplicationSlotTimeout(pg: PostgresFacts, options: DoctorOptions): CheckResult {
  const name = 'idle_replication_slot_timeout';
  const t = pg.idleReplicationSlotTimeoutSeconds;
  if (t === null) return ok(name, `not on this server (PostgreSQL ${pg.serverVersion}; the setting is 18+)`);
  if (t === 0) return ok(name, '0 (off): an idle slot is never invalidated for being idle');
  const fix = `ALTER SYSTEM SET idle_replication_slot_timeout = 0; ${reload}   (or a value above --max-downtime)`;
  const found = `${formatDuration(t * 1000)}: a slot with no relay connected this long is invalidated at the next checkpoint (cause idle_timeout)`;
  if (t * 1000 < options.maxDowntimeMs) return fail(name, `${found}, shorter than --max-downtime ${formatDuration(options.maxDowntimeMs)}`, fix);
  return warn(name, found, fix);
}

export function checkSynchronizedStandbySlots(pg: PostgresFacts): CheckResult {
  const name = 'synchronized_standby_slots';
  const s = pg.synchronizedStandbySlots;
  if (s === null) return ok(name, `not on this server (PostgreSQL ${pg.serverVersion}; the setting is 17+)`);
  if (s.slots.length === 0) return ok(name, s.setting === '*' ? "'*'" : "'' (none)");
  const problems = s.slots.flatMap((slot) =>
    !slot.exists
      ? [`${slot.name} does not exist`]
      : !slot.physical
        ? [`${slot.name} is not a physical slot`]
        : !slot.active
          ? [`${slot.name} is inactive (no standby streams from it)`]
          : [],
  );
  if (problems.length === 0) return ok(name, `'${s.setting}': every slot named is a physical slot with a standby streaming`);
  const healthy = s.slots.filter((slot) => slot.exists && slot.physical && slot.active).map((slot) => slot.name);
  return fail(
    name,
    `'${s.setting}': ${problems.join('; ')}. PostgreSQL holds back logical decoding of failover slots until these slots confirm the WAL, so the relay stalls while looking healthy`,
    `start the standby streaming from it (primary_slot_name), or ALTER SYSTEM SET synchronized_standby_slots = '${healthy.join(',')}'; ${reload}`,
  );
}

export function checkStandby(pg: PostgresFacts, standby: StandbyFacts | null, standbyError: string | null): CheckResult {
  const name = 'standby (failover slot)';
  if (standbyError !== null) return fail(name, `cannot read the standby: ${standbyError}`, 'check --standby-url and that the standby is up');
  if (standby === null) {
    if (pg.slot.failover === true) return ok(name, 'failover slot; no --standby-url given, so the standby was not checked');
    return ok(name, 'not checked (give --standby-url)');
  }
  if (!standby.inRecovery) return fail(name, 'the server at --standby-url is not a standby (not in recovery)', 'point --standby-url at the standby');
  const problems: string[] = [];
  const fixes: string[] = [];
  if (standby.syncReplicationSlots !== 'on') {
    problems.push(`sync_replication_slots = ${standby.syncReplicationSlots ?? '(not on this server: 17+)'}: the standby keeps no copy of slot ${pg.slot.slot}`);
    fixes.push('ALTER SYSTEM SET sync_replication_slots = on');
  }
  if (standby.hotStandbyFeedback !== 'on') {
    problems.push('hot_standby_feedback = off: slot synchronization needs it (and synced slots would be invalidated, cause rows_removed)');
    fixes.push('ALTER SYSTEM SET hot_standby_feedback = on');
  }
  if (standby.primarySlotName === '') {
    problems.push('primary_slot_name is empty: the standby streams without a physical slot on the primary');
    fixes.push("ALTER SYSTEM SET primary_slot_name = '<a physical slot on the primary>'");
  }
  if (pg.slot.failover !== true) {
    problems.push(`slot ${pg.slot.slot} is not a failover slot: no standby keeps a copy of it`);
    fixes.push(
      `on the primary, after the relay stopped: outbox-tail recover with a slot created by \`outbox-tail init --slot ${pg.slot.slot} --failover-slot\` (docs/operations.md, Failover slots)`,
    );
  }
  if (problems.length > 0) return fail(name, problems.join('; '), `on the standby: ${fixes.join('; ')}; ${reload}`);
  if (standby.slot === null || standby.slot.synced !== true) {
    return warn(
      name,
      `settings are right, but slot ${pg.slot.slot} has no synchronized copy on the standby yet`,
      "wait for the slot sync worker (it syncs once the slot has confirmed past the standby's position), then run doctor again",
    );
  }
  return ok(name, `sync_replication_slots = on, hot_standby_feedback = on, primary_slot_name = ${standby.primarySlotName}; slot ${pg.slot.slot} synced`);
}

export function checkPublication(pg: PostgresFacts, config: DoctorSettings): CheckResult {
  const name = 'publication';
  const { publication, table } = config;
  const readsTable = config.source !== 'messages';
  const create = `CREATE PUBLICATION ${publication} FOR TABLE ${table} WITH (publish = 'insert')   (or outbox-tail init)`;
  if (!pg.slot.publicationExists || pg.publicationActions === null) return fail(name, `${publication} does not exist`, create);
  const actions = pg.publicationActions;
  if (readsTable && !pg.slot.publicationTables.includes(table)) {
    return fail(
      name,
      `${publication} does not contain ${table} (it has ${pg.slot.publicationTables.join(', ') || 'no tables'})`,
      `ALTER PUBLICATION ${publication} ADD TABLE ${table}`,
    );
  }
  if (readsTable && !actions.insert) {
    return fail(name, `${publication} does not publish INSERTs`, `ALTER PUBLICATION ${publication} SET (publish = 'insert')`);
  }
  const extra = (['update', 'delete', 'truncate'] as const).filter((a) => actions[a]);
  if (readsTable && extra.length > 0) {
    return warn(
      name,
      `${publication} also publishes ${extra.join(', ')}: prune's DELETEs are decoded and sent to the relay, which ignores them`,
      `ALTER PUBLICATION ${publication} SET (publish = 'insert')`,
    );
  }
  return ok(name, readsTable ? `${publication} publishes INSERTs of ${table}` : `${publication} exists (--source messages reads no table)`);
}

export function checkSlot(pg: PostgresFacts, config: DoctorSettings): CheckResult {
  const name = 'replication slot';
  const s = pg.slot;
  if (s.slotType === null) {
    const fix = `outbox-tail init --slot ${s.slot}   (if the slot existed before, it was dropped: outbox-tail recover)`;
    return config.createSlot
      ? warn(name, `${s.slot} does not exist; --create-slot creates it at start, relaying only changes from then on`, fix)
      : fail(name, `${s.slot} does not exist`, fix);
  }
  if (s.slotType !== 'logical' || s.plugin !== 'pgoutput') {
    return fail(
      name,
      `${s.slot} is a ${s.slotType} slot with plugin ${s.plugin ?? 'none'}, not pgoutput`,
      `use another --slot, or drop it and run outbox-tail init --slot ${s.slot}`,
    );
  }
  if (s.database !== pg.database) {
    return fail(name, `${s.slot} belongs to database ${s.database}, not ${pg.database}`, "point --database-url at the slot's database, or use another --slot");
  }
  if (s.invalidation) {
    return fail(
      name,
      `${s.slot} is invalidated, cause ${s.invalidation.reason} (${s.invalidation.source}): ${s.invalidation.cause}`,
      `${s.invalidation.fix}; then outbox-tail recover (new slot, re-publish from the outbox table)`,
    );
  }
  return ok(
    name,
    `${s.slot}: pgoutput in ${s.database}, ${s.active ? `active (pid ${s.activePid})` : 'inactive'}, wal_status ${s.walStatus ?? '-'}, lag ${formatBytes(s.lagBytes ?? 0)}`,
  );
}

export function checkRole(pg: PostgresFacts, config: DoctorSettings): CheckResult {
  const name = 'role privileges';
  const { superuser, replication, selectOutbox, writePosition, emitMessage } = pg.role;
  const { user } = pg;
  if (!superuser && !replication) return fail(name, `${user} has no REPLICATION`, `ALTER ROLE ${user} REPLICATION   (docker/least-privilege.sql)`);
  if (superuser) {
    return warn(
      name,
      `${user} is a superuser: the relay needs only LOGIN REPLICATION`,
      'run the relay as a least-privilege role: psql -f docker/least-privilege.sql (LOGIN REPLICATION, owns nothing)',
    );
  }
  if (config.onSlotLost === 'recover' && selectOutbox === false) {
    return fail(name, `${user} may not SELECT from ${config.table}: --on-slot-lost recover re-publishes from it`, `GRANT SELECT ON ${config.table} TO ${user}`);
  }
  if (config.heartbeatIntervalMs > 0 && !emitMessage) {
    return fail(
      name,
      `${user} may not EXECUTE pg_logical_emit_message: --heartbeat-interval-ms fails`,
      `GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) TO ${user}`,
    );
  }
  if (writePosition === false) {
    return warn(
      name,
      `${user} may not write outbox_tail_relay_position: the relay runs but records no position, so recover after a lost slot needs --since`,
      `GRANT SELECT, INSERT, UPDATE ON outbox_tail_relay_position TO ${user}`,
    );
  }
  return ok(name, `${user}: REPLICATION, not superuser${writePosition ? ', writes outbox_tail_relay_position' : ''}`);
}

export function checkOutboxRetention(pg: PostgresFacts, config: DoctorSettings, options: DoctorOptions, nowMs: number): CheckResult {
  const name = 'outbox size and age';
  const o = pg.slot.outbox;
  if (config.source === 'messages') return ok(name, '--source messages: no outbox table is read');
  if (!o || o.totalBytes === null) return fail(name, `${config.table} does not exist`, 'outbox-tail init   (or point --table at the outbox table)');
  const age = o.oldestCreatedAt === null ? null : nowMs - Date.parse(o.oldestCreatedAt);
  const found = `${config.table}: ~${o.rowsEstimate ?? '?'} rows, ${formatBytes(o.totalBytes)}, oldest row ${age === null ? '-' : `${formatDuration(Math.max(0, age))} old`}`;
  if (options.pruneOlderThanMs === null) return ok(name, `${found} (give --prune-older-than to check it against prune's retention)`);
  if (age !== null && age > 2 * options.pruneOlderThanMs) {
    return warn(
      name,
      `${found}: older than twice the prune retention ${formatDuration(options.pruneOlderThanMs)}, so prune is not running (or the slot holds rows back)`,
      `outbox-tail prune --older-than ${formatDuration(options.pruneOlderThanMs)}   (schedule it: cron or a systemd timer)`,
    );
  }
  return ok(name, `${found}; prune retention ${formatDuration(options.pruneOlderThanMs)}`);
}

export function checkTopics(kafka: KafkaFacts, config: DoctorSettings, options: DoctorOptions): CheckResult {
  const name = 'kafka topics';
  if (kafka.topics.length === 0) return ok(name, `no outbox rows yet: no topic name of ${config.topic} to check`);
  const missing = kafka.topics.filter((t) => !t.exists);
  const partitions = options.partitions ?? 1;
  const create = (t: string) => `kafka-topics.sh --bootstrap-server <broker> --create --topic ${t} --partitions ${partitions} --replication-factor <RF>`;
  if (missing.length > 0) {
    const names = missing.map((t) => t.name).join(', ');
    return config.allowAutoTopicCreation
      ? warn(
          name,
          `${names} missing: auto-created at the first record with the broker's defaults (num.partitions, default.replication.factor)`,
          missing.map((t) => create(t.name)).join('; '),
        )
      : fail(
          name,
          `${names} missing, and --allow-auto-topic-creation is off: the relay fails on the first record`,
          missing.map((t) => create(t.name)).join('; '),
        );
  }
  if (options.partitions !== null) {
    const wrong = kafka.topics.filter((t) => t.partitions !== options.partitions);
    if (wrong.length > 0) {
      return fail(
        name,
        wrong.map((t) => `${t.name} has ${t.partitions} partition(s), not ${options.partitions}`).join('; '),
        wrong
          .map((t) =>
            (t.partitions ?? 0) < options.partitions!
              ? `kafka-topics.sh --bootstrap-server <broker> --alter --topic ${t.name} --partitions ${options.partitions}   (keys move to other partitions: per-key order holds only for records written after)`
              : `recreate ${t.name} with ${options.partitions} partitions (Kafka cannot remove partitions)`,
          )
          .join('; '),
      );
    }
  }
  return ok(name, kafka.topics.map((t) => `${t.name} (${t.partitions} partitions)`).join(', '));
}

/** The relay always produces with acks=all: min.insync.replicas decides how many copies that is, and whether producing works at all. */
export function checkMinInsyncReplicas(kafka: KafkaFacts, config: DoctorSettings): CheckResult {
  const name = 'min.insync.replicas (acks=all)';
  const topics = [...kafka.topics, ...(config.delivery === 'exactly-once' ? [kafka.offsetsTopic] : [])].filter((t) => t.exists);
  if (topics.length === 0) return ok(name, 'no existing topic to check; the relay produces with acks=all');
  const alter = (t: KafkaTopicFacts, n: number) =>
    `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name ${t.name} --add-config min.insync.replicas=${n}`;
  const tooHigh = topics.filter((t) => (t.minInsyncReplicas ?? 1) > (t.replicationFactor ?? 1));
  if (tooHigh.length > 0) {
    return fail(
      name,
      tooHigh.map((t) => `${t.name}: min.insync.replicas ${t.minInsyncReplicas} > replication factor ${t.replicationFactor}`).join('; ') +
        ': every acks=all produce fails (NOT_ENOUGH_REPLICAS), the relay cannot publish',
      tooHigh.map((t) => alter(t, Math.max(1, (t.replicationFactor ?? 1) - 1))).join('; '),
    );
  }
  const weak = topics.filter((t) => kafka.brokers >= 3 && ((t.replicationFactor ?? 1) < 3 || (t.minInsyncReplicas ?? 1) < 2));
  if (weak.length > 0) {
    return warn(
      name,
      weak.map((t) => `${t.name}: replication factor ${t.replicationFactor}, min.insync.replicas ${t.minInsyncReplicas}`).join('; ') +
        ` on ${kafka.brokers} brokers: an acknowledged record may live on one broker only`,
      weak.map((t) => ((t.replicationFactor ?? 1) < 3 ? `recreate ${t.name} with --replication-factor 3, then ${alter(t, 2)}` : alter(t, 2))).join('; '),
    );
  }
  const brittle = topics.filter((t) => (t.replicationFactor ?? 1) > 1 && t.minInsyncReplicas === t.replicationFactor);
  if (brittle.length > 0) {
    return warn(
      name,
      brittle.map((t) => `${t.name}: min.insync.replicas = replication factor = ${t.replicationFactor}`).join('; ') + ': one broker down stops the relay',
      brittle.map((t) => alter(t, (t.replicationFactor ?? 2) - 1)).join('; '),
    );
  }
  const single = kafka.brokers === 1 ? ' (a single-broker cluster: one copy of each record)' : '';
  return ok(name, `${topics.map((t) => `${t.name}: RF ${t.replicationFactor}, min.insync.replicas ${t.minInsyncReplicas}`).join('; ')}; acks=all${single}`);
}

/**
 * A topic whose compression.type names a codec makes the broker recompress every batch into it: the relay's
 * --compression is undone at the broker's CPU (and, with none, the relay's cheap batches are compressed there).
 */
export function checkCompression(kafka: KafkaFacts, config: DoctorSettings): CheckResult {
  const name = 'topic compression';
  const codec = config.compression ?? 'none';
  const topics = [...kafka.topics, ...(config.delivery === 'exactly-once' ? [kafka.offsetsTopic] : [])].filter((t) => t.exists);
  if (topics.length === 0) return ok(name, `no existing topic to check; the relay writes --compression ${codec}`);
  const keeps = (t: KafkaTopicFacts) => t.compressionType === null || t.compressionType === 'producer' || t.compressionType === codec;
  const forced = topics.filter((t) => !keeps(t));
  if (forced.length > 0) {
    return warn(
      name,
      forced.map((t) => `${t.name}: compression.type=${t.compressionType}`).join('; ') +
        `: the broker recompresses the relay's ${codec} batches into that codec, at its own CPU cost`,
      forced
        .map((t) => `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name ${t.name} --add-config compression.type=producer`)
        .join('; ') + ` (or run the relay with --compression ${forced[0]!.compressionType})`,
    );
  }
  return ok(name, `${topics.map((t) => `${t.name}: compression.type=${t.compressionType ?? 'producer'}`).join(', ')}; the relay writes ${codec}`);
}

export function checkRetention(kafka: KafkaFacts, options: DoctorOptions): CheckResult {
  const name = 'topic retention';
  const topics = kafka.topics.filter((t) => t.exists);
  if (topics.length === 0) return ok(name, 'no existing topic to check');
  const window = formatDuration(options.recoveryWindowMs);
  const short = topics.filter((t) => t.retentionMs !== null && t.retentionMs !== -1 && t.retentionMs < options.recoveryWindowMs);
  if (short.length > 0) {
    return warn(
      name,
      short.map((t) => `${t.name}: retention.ms ${t.retentionMs} (${formatDuration(t.retentionMs!)})`).join('; ') +
        ` < --recovery-window ${window}: records are deleted before a consumer, verify or replay --only-missing can read them`,
      short
        .map(
          (t) =>
            `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name ${t.name} --add-config retention.ms=${options.recoveryWindowMs}`,
        )
        .join('; '),
    );
  }
  return ok(
    name,
    `${topics.map((t) => `${t.name}: ${t.retentionMs === -1 ? 'forever' : formatDuration(t.retentionMs ?? 0)}`).join(', ')} >= --recovery-window ${window}`,
  );
}

export function checkOffsetsTopic(kafka: KafkaFacts, config: DoctorSettings): CheckResult {
  const name = 'offsets topic (exactly-once)';
  const t = kafka.offsetsTopic;
  if (config.delivery !== 'exactly-once') return ok(name, 'not used (--delivery at-least-once)');
  if (!t.exists) return fail(name, `${t.name} does not exist: the relay refuses to start`, 'outbox-tail init --delivery exactly-once   (creates it compacted)');
  if (!(t.cleanupPolicy ?? '').split(',').includes('compact')) {
    return fail(
      name,
      `${t.name} has cleanup.policy=${t.cleanupPolicy}: the slot's watermark is deleted after retention.ms and everything the slot still holds is published again`,
      `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name ${t.name} --add-config cleanup.policy=compact`,
    );
  }
  return ok(name, `${t.name}: cleanup.policy=${t.cleanupPolicy}`);
}

export function checkTransactionTimeout(kafka: KafkaFacts, config: DoctorSettings): CheckResult {
  const name = 'transaction.max.timeout.ms';
  if (config.delivery !== 'exactly-once') return ok(name, 'not used (--delivery at-least-once)');
  const max = kafka.transactionMaxTimeoutMs;
  if (max === null)
    return warn(
      name,
      "the broker's transaction.max.timeout.ms could not be read (DescribeConfigs denied?)",
      'check the broker setting by hand: it must be >= --transaction-timeout-ms',
    );
  if (max < config.transactionTimeoutMs) {
    return fail(
      name,
      `broker ${max} ms < --transaction-timeout-ms ${config.transactionTimeoutMs}: InitProducerId fails (INVALID_TRANSACTION_TIMEOUT)`,
      `--transaction-timeout-ms ${max}   (or raise transaction.max.timeout.ms on every broker and restart them)`,
    );
  }
  return ok(name, `broker ${max} ms >= --transaction-timeout-ms ${config.transactionTimeoutMs}`);
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)$/;

/** A connection that never leaves the machine (loopback or a Unix socket) needs no TLS. */
function isLocal(host: string | undefined): boolean {
  return host === undefined || host === '' || host.startsWith('/') || LOOPBACK.test(host);
}

/**
 * What the doctor's connection negotiated (pg_stat_ssl) beside what the options ask (libpq's sslmode table).
 * Unverified TLS, and no TLS to another machine, are warnings: the password and every row cross the network.
 */
export function checkPostgresTls(pg: PostgresFacts, config: DoctorSettings): CheckResult {
  const name = 'postgres TLS';
  const posture = postgresTransport(config);
  const negotiated = pg.tls ? `${pg.tls.version} ${pg.tls.cipher}` : 'not encrypted';
  const found = `${negotiated}; ${posture.summary}`;
  if (posture.risk) return warn(name, found, posture.fix!);
  if (!pg.tls && !isLocal(pg.host)) {
    return warn(name, `${found}: the password and every row cross the network in clear`, posture.fix ?? '--pg-sslmode verify-full --pg-sslrootcert <CA file>');
  }
  return ok(name, found);
}

/** Kafka's TLS from the options (the connection above succeeded with them); SASL without TLS is a warning. */
export function checkKafkaTls(config: DoctorSettings): CheckResult {
  const name = 'kafka TLS';
  const posture = kafkaTransport(config);
  if (posture.risk) return warn(name, `${posture.summary}: ${posture.risk.replace(/^Kafka: /, '')}`, posture.fix!);
  if (posture.plaintext && !config.brokers.every((b) => isLocal(b.replace(/:\d+$/, '')))) {
    return warn(name, `${posture.summary}: every record crosses the network in clear`, posture.fix!);
  }
  return ok(name, posture.summary);
}

/**
 * A relay pointed at a hot standby (docs/standby-decoding.md): decoding there needs 16+, hot_standby_feedback and a
 * physical slot; a failover deployment's standby waits for its promotion instead. primaryWalLevel: from --primary-url
 * (null when not given or unreachable: not checked).
 */
export function checkStandbyDecoding(pg: PostgresFacts, config: DoctorSettings, primaryWalLevel: string | null): CheckResult {
  const name = 'postgres standby decoding';
  const facts = pg.standbyDecoding!;
  const verdict = standbyDecodingVerdict({
    serverVersionNum: pg.serverVersionNum,
    hotStandbyFeedback: facts.hotStandbyFeedback,
    primarySlotName: facts.primarySlotName,
    receiverStatus: facts.receiverStatus,
    slot: pg.slot.exists ? { synced: pg.slot.synced } : null,
    syncReplicationSlots: facts.syncReplicationSlots,
    failoverSlot: config.failoverSlot,
  });
  if (verdict.kind === 'wait-for-promotion') {
    return fail('postgres primary', `a standby (in recovery): ${verdict.reason}`, 'point --database-url at the primary (and --standby-url at the standby)');
  }
  if (verdict.kind === 'refuse') return fail(name, verdict.reason, verdict.fix);
  if (primaryWalLevel !== null && primaryWalLevel !== 'logical') {
    return fail(
      name,
      `the primary's wal_level is ${primaryWalLevel}: a standby decodes only what the primary logs at wal_level logical`,
      'on the primary: ALTER SYSTEM SET wal_level = logical, restart it',
    );
  }
  const lag = pg.slot.standby?.replayLagBytes;
  const found = `hot standby, hot_standby_feedback on, physical slot ${facts.primarySlotName}, WAL receiver ${facts.receiverStatus ?? 'not running'}, replay lag ${lag ?? '-'} bytes${primaryWalLevel === null ? "; the primary's wal_level not checked (give --primary-url)" : ", the primary's wal_level logical"}`;
  if (verdict.warnings.length > 0)
    return warn(name, `${found}: ${verdict.warnings.join('; ')}`, "check the standby's primary_conninfo and that the primary is up");
  return ok(name, found);
}

/** Every PostgreSQL check, in the order an operator fixes them. */
export function postgresChecks(
  pg: PostgresFacts,
  config: DoctorSettings,
  options: DoctorOptions,
  standby: { facts: StandbyFacts | null; error: string | null },
  nowMs: number,
): CheckResult[] {
  return [
    checkPostgresTls(pg, config),
    checkWalLevel(pg),
    checkMaxSlotWalKeepSize(pg, options),
    checkIdleReplicationSlotTimeout(pg, options),
    checkSynchronizedStandbySlots(pg),
    checkStandby(pg, standby.facts, standby.error),
    checkPublication(pg, config),
    checkSlot(pg, config),
    checkRole(pg, config),
    checkOutboxRetention(pg, config, options, nowMs),
  ];
}

export function kafkaChecks(kafka: KafkaFacts, config: DoctorSettings, options: DoctorOptions): CheckResult[] {
  return [
    checkTopics(kafka, config, options),
    checkMinInsyncReplicas(kafka, config),
    checkRetention(kafka, options),
    checkCompression(kafka, config),
    checkOffsetsTopic(kafka, config),
    checkTransactionTimeout(kafka, config),
  ];
}

/** The process exit code of a report (docs/doctor.md, Exit codes: 0 ok, 1 a warning, 2 a failure, as monitoring plugins count). */
export function doctorExitCode(results: CheckResult[]): number {
  if (results.some((r) => r.status === 'fail')) return EXIT.DOCTOR_FAIL;
  if (results.some((r) => r.status === 'warn')) return EXIT.DOCTOR_WARN;
  return EXIT.OK;
}
