import { describe, expect, it } from 'vitest';
import type { SlotStatus } from '../../../src/postgres/slots/slot-status.js';
import { configSchema } from '../../../src/config/config-schema.js';
import { toRunConfig, type RunConfig } from '../../../src/config/run-config.js';
import {
  checkIdleReplicationSlotTimeout,
  checkKafkaTls,
  checkPostgresTls,
  checkStandbyDecoding,
  checkMaxSlotWalKeepSize,
  checkMinInsyncReplicas,
  checkOffsetsTopic,
  checkOutboxRetention,
  checkPublication,
  checkRetention,
  checkCompression,
  checkRole,
  checkSlot,
  checkStandby,
  checkSynchronizedStandbySlots,
  checkTopics,
  checkTransactionTimeout,
  checkWalLevel,
  doctorExitCode,
  suggestedKeepSize,
  type CheckResult,
} from '../../../src/commands/doctor/doctor-checks.js';
import type { DoctorOptions, KafkaFacts, KafkaTopicFacts, PostgresFacts, StandbyFacts } from '../../../src/commands/doctor/doctor-facts.js';
import { expectedTopics, topicPattern } from '../../../src/commands/doctor/gather-kafka-facts.js';
import { formatDoctorReport } from '../../../src/commands/doctor/run-doctor.js';

const GB = 1024 ** 3;
const MB = 1024 ** 2;
const NOW = Date.parse('2026-12-04T12:00:00Z');

const config = (over: Record<string, unknown> = {}): RunConfig => toRunConfig(configSchema.parse({ slot: 'orders', ...over }));
const options = (over: Partial<DoctorOptions> = {}): DoctorOptions => ({
  maxDowntimeMs: 3_600_000,
  walSampleMs: 2_000,
  recoveryWindowMs: 7 * 86_400_000,
  pruneOlderThanMs: null,
  partitions: null,
  standbyUrl: null,
  ...over,
});

function slot(over: Partial<SlotStatus> = {}): SlotStatus {
  return {
    slot: 'orders',
    exists: true,
    plugin: 'pgoutput',
    active: true,
    activePid: 42,
    confirmedFlushLsn: '0/1000',
    restartLsn: '0/900',
    currentWalLsn: '0/2000',
    lagBytes: 4096,
    retainedWalBytes: 8192,
    walStatus: 'reserved',
    safeWalSizeBytes: null,
    maxSlotWalKeepSizeBytes: -1,
    invalidationReason: null,
    invalidation: null,
    slotType: 'logical',
    database: 'app',
    failover: false,
    synced: false,
    publication: 'outbox_tail',
    publicationExists: true,
    publicationTables: ['public.outbox'],
    outbox: { table: 'public.outbox', rowsEstimate: 10, totalBytes: 65536, oldestCreatedAt: '2026-12-04T11:00:00Z' },
    standby: null,
    ...over,
  };
}

function pg(over: Partial<PostgresFacts> = {}): PostgresFacts {
  return {
    serverVersion: '18.1',
    serverVersionNum: 180001,
    database: 'app',
    user: 'outbox_tail',
    inRecovery: false,
    standbyDecoding: null,
    walLevel: 'logical',
    tls: null,
    host: '127.0.0.1',
    maxSlotWalKeepSizeBytes: 8 * GB,
    idleReplicationSlotTimeoutSeconds: 0,
    synchronizedStandbySlots: { setting: '', slots: [] },
    walRate: { sampleBytesPerSecond: 100_000, sampleMs: 2000, averageBytesPerSecond: 50_000, averageOverSeconds: 3600 },
    slot: slot(),
    publicationActions: { insert: true, update: false, delete: false, truncate: false },
    role: { superuser: false, replication: true, selectOutbox: false, writePosition: true, emitMessage: true },
    templateValues: [{ aggregateType: 'order', eventType: 'OrderCreated' }],
    ...over,
  };
}

const topic = (over: Partial<KafkaTopicFacts> = {}): KafkaTopicFacts => ({
  name: 'outbox.event.order',
  exists: true,
  partitions: 6,
  replicationFactor: 3,
  minInsyncReplicas: 2,
  retentionMs: 7 * 86_400_000,
  cleanupPolicy: 'delete',
  compressionType: 'producer',
  ...over,
});

function kafka(over: Partial<KafkaFacts> = {}): KafkaFacts {
  return {
    brokers: 3,
    topics: [topic()],
    offsetsTopic: topic({ name: 'outbox-tail.offsets', partitions: 1, cleanupPolicy: 'compact' }),
    transactionMaxTimeoutMs: 900_000,
    ...over,
  };
}

const status = (r: CheckResult) => r.status;

describe('doctor checks (pure, over gathered facts)', () => {
  it('wal_level: ok when logical, fail with ALTER SYSTEM and a restart otherwise', () => {
    expect(checkWalLevel(pg())).toMatchObject({ status: 'ok', fix: null });
    expect(checkWalLevel(pg({ walLevel: 'replica' }))).toMatchObject({ status: 'fail', fix: 'ALTER SYSTEM SET wal_level = logical; then restart PostgreSQL' });
  });

  it('max_slot_wal_keep_size: warns when unbounded, fails below the WAL of --max-downtime, ok above it; suggests twice the need', () => {
    // 100 kB/s (the larger of sample and average) for 1 h = ~343 MB; 8 GB holds it.
    expect(status(checkMaxSlotWalKeepSize(pg(), options()))).toBe('ok');
    const unbounded = checkMaxSlotWalKeepSize(pg({ maxSlotWalKeepSizeBytes: null }), options());
    expect(unbounded.status).toBe('warn');
    expect(unbounded.found).toMatch(/unbounded.*disk/);
    expect(unbounded.fix).toBe("ALTER SYSTEM SET max_slot_wal_keep_size = '1GB'; SELECT pg_reload_conf()");
    const small = checkMaxSlotWalKeepSize(pg({ maxSlotWalKeepSizeBytes: 64 * MB }), options());
    expect(small.status).toBe('fail');
    expect(small.found).toMatch(/64\.0 MB, less than the WAL of --max-downtime 1h/);
    // The long-run average counts when it is the larger: 10 MB/s for 1 h = ~35 GB, suggested 2 x = 71 GB.
    const busy = checkMaxSlotWalKeepSize(
      pg({ walRate: { sampleBytesPerSecond: 0, sampleMs: 2000, averageBytesPerSecond: 10 * MB, averageOverSeconds: 86400 } }),
      options(),
    );
    expect(busy.status).toBe('fail');
    expect(busy.fix).toContain("'71GB'");
    expect(suggestedKeepSize(3 * GB)).toBe('6GB');
    const retained = checkMaxSlotWalKeepSize(pg({ slot: slot({ retainedWalBytes: 5 * GB }) }), options());
    expect(retained).toMatchObject({ status: 'warn' });
    expect(retained.found).toMatch(/already retains 5\.0 GB/);
  });

  it('idle_replication_slot_timeout: ok when absent (< 18) or 0, warn when set, fail when shorter than --max-downtime', () => {
    expect(checkIdleReplicationSlotTimeout(pg({ idleReplicationSlotTimeoutSeconds: null, serverVersion: '15.8' }), options())).toMatchObject({ status: 'ok' });
    expect(checkIdleReplicationSlotTimeout(pg(), options())).toMatchObject({ status: 'ok' });
    const short = checkIdleReplicationSlotTimeout(pg({ idleReplicationSlotTimeoutSeconds: 60 }), options());
    expect(short.status).toBe('fail');
    expect(short.found).toMatch(/^1m: .*idle_timeout.*shorter than --max-downtime 1h/);
    expect(short.fix).toMatch(/^ALTER SYSTEM SET idle_replication_slot_timeout = 0; SELECT pg_reload_conf\(\)/);
    expect(checkIdleReplicationSlotTimeout(pg({ idleReplicationSlotTimeoutSeconds: 86_400 }), options())).toMatchObject({ status: 'warn' });
  });

  it('synchronized_standby_slots: fails naming a missing, non-physical or inactive slot, with the setting that keeps the healthy ones', () => {
    expect(status(checkSynchronizedStandbySlots(pg({ synchronizedStandbySlots: null })))).toBe('ok');
    expect(status(checkSynchronizedStandbySlots(pg()))).toBe('ok');
    const healthy = { name: 'sb1', exists: true, physical: true, active: true };
    expect(status(checkSynchronizedStandbySlots(pg({ synchronizedStandbySlots: { setting: 'sb1', slots: [healthy] } })))).toBe('ok');
    const r = checkSynchronizedStandbySlots(
      pg({
        synchronizedStandbySlots: {
          setting: 'sb1,gone,idle,logi',
          slots: [
            healthy,
            { name: 'gone', exists: false, physical: false, active: false },
            { name: 'idle', exists: true, physical: true, active: false },
            { name: 'logi', exists: true, physical: false, active: true },
          ],
        },
      }),
    );
    expect(r.status).toBe('fail');
    expect(r.found).toMatch(/gone does not exist; idle is inactive .*; logi is not a physical slot/);
    expect(r.fix).toContain("ALTER SYSTEM SET synchronized_standby_slots = 'sb1'; SELECT pg_reload_conf()");
  });

  it('standby: fails on a failover slot whose standby lacks sync_replication_slots, hot_standby_feedback or primary_slot_name; ok when synced', () => {
    const failover = pg({ slot: slot({ failover: true }) });
    const good: StandbyFacts = {
      inRecovery: true,
      syncReplicationSlots: 'on',
      hotStandbyFeedback: 'on',
      primarySlotName: 'sb1',
      slot: { synced: true, invalidationReason: null },
    };
    expect(checkStandby(failover, good, null)).toMatchObject({ status: 'ok' });
    expect(checkStandby(failover, null, null)).toMatchObject({ status: 'ok', found: expect.stringMatching(/not checked/) });
    const off = checkStandby(failover, { ...good, syncReplicationSlots: 'off', hotStandbyFeedback: 'off' }, null);
    expect(off.status).toBe('fail');
    expect(off.fix).toBe('on the standby: ALTER SYSTEM SET sync_replication_slots = on; ALTER SYSTEM SET hot_standby_feedback = on; SELECT pg_reload_conf()');
    expect(checkStandby(pg(), good, null)).toMatchObject({ status: 'fail', found: expect.stringMatching(/not a failover slot/) });
    expect(checkStandby(failover, { ...good, inRecovery: false }, null)).toMatchObject({ status: 'fail' });
    expect(checkStandby(failover, { ...good, slot: null }, null)).toMatchObject({ status: 'warn' });
    expect(checkStandby(failover, null, 'ECONNREFUSED')).toMatchObject({ status: 'fail' });
  });

  it('publication: fails when missing, without the table or without inserts; warns when it also publishes deletes', () => {
    const c = config();
    expect(checkPublication(pg(), c)).toMatchObject({ status: 'ok' });
    expect(checkPublication(pg({ publicationActions: null, slot: slot({ publicationExists: false, publicationTables: [] }) }), c)).toMatchObject({
      status: 'fail',
      fix: "CREATE PUBLICATION outbox_tail FOR TABLE public.outbox WITH (publish = 'insert')   (or outbox-tail init)",
    });
    expect(checkPublication(pg({ slot: slot({ publicationTables: [] }) }), c)).toMatchObject({
      status: 'fail',
      fix: 'ALTER PUBLICATION outbox_tail ADD TABLE public.outbox',
    });
    expect(checkPublication(pg({ publicationActions: { insert: false, update: true, delete: false, truncate: false } }), c)).toMatchObject({
      status: 'fail',
      fix: "ALTER PUBLICATION outbox_tail SET (publish = 'insert')",
    });
    expect(checkPublication(pg({ publicationActions: { insert: true, update: true, delete: true, truncate: true } }), c)).toMatchObject({ status: 'warn' });
    expect(checkPublication(pg({ slot: slot({ publicationTables: [] }) }), config({ source: 'messages' }))).toMatchObject({ status: 'ok' });
  });

  it('slot: fails when missing (warns with --create-slot), not pgoutput, in another database, or invalidated with the cause and its fix', () => {
    const c = config();
    expect(checkSlot(pg(), c)).toMatchObject({ status: 'ok' });
    expect(checkSlot(pg({ slot: slot({ slotType: null, exists: false }) }), c)).toMatchObject({
      status: 'fail',
      fix: expect.stringMatching(/^outbox-tail init --slot orders/),
    });
    expect(checkSlot(pg({ slot: slot({ slotType: null, exists: false }) }), config({ createSlot: true }))).toMatchObject({ status: 'warn' });
    expect(checkSlot(pg({ slot: slot({ plugin: 'test_decoding' }) }), c)).toMatchObject({
      status: 'fail',
      found: expect.stringMatching(/test_decoding, not pgoutput/),
    });
    expect(checkSlot(pg({ slot: slot({ slotType: 'physical', plugin: null }) }), c)).toMatchObject({ status: 'fail' });
    expect(checkSlot(pg({ slot: slot({ database: 'other' }) }), c)).toMatchObject({ status: 'fail', found: 'orders belongs to database other, not app' });
    const lost = checkSlot(
      pg({
        slot: slot({
          walStatus: 'lost',
          invalidation: { reason: 'idle_timeout', source: 'invalidation_reason', cause: 'idle', fix: 'ALTER SYSTEM SET idle_replication_slot_timeout = 0' },
        }),
      }),
      c,
    );
    expect(lost).toMatchObject({ status: 'fail', found: 'orders is invalidated, cause idle_timeout (invalidation_reason): idle' });
    expect(lost.fix).toBe('ALTER SYSTEM SET idle_replication_slot_timeout = 0; then outbox-tail recover (new slot, re-publish from the outbox table)');
  });

  it('role: fails without REPLICATION, warns on a superuser, fails when recover or the heartbeat lacks its privilege, warns without the position table', () => {
    const c = config();
    const role = pg().role;
    expect(checkRole(pg(), c)).toMatchObject({ status: 'ok' });
    expect(checkRole(pg({ role: { ...role, replication: false } }), c)).toMatchObject({
      status: 'fail',
      fix: 'ALTER ROLE outbox_tail REPLICATION   (docker/least-privilege.sql)',
    });
    expect(checkRole(pg({ role: { ...role, superuser: true } }), c)).toMatchObject({ status: 'warn', fix: expect.stringMatching(/least-privilege/) });
    expect(checkRole(pg(), config({ onSlotLost: 'recover' }))).toMatchObject({ status: 'fail', fix: 'GRANT SELECT ON public.outbox TO outbox_tail' });
    expect(checkRole(pg({ role: { ...role, selectOutbox: true } }), config({ onSlotLost: 'recover' }))).toMatchObject({ status: 'ok' });
    expect(checkRole(pg({ role: { ...role, emitMessage: false } }), config({ heartbeatIntervalMs: 1000 }))).toMatchObject({ status: 'fail' });
    expect(checkRole(pg({ role: { ...role, writePosition: false } }), c)).toMatchObject({
      status: 'warn',
      fix: 'GRANT SELECT, INSERT, UPDATE ON outbox_tail_relay_position TO outbox_tail',
    });
  });

  it('outbox size and age: fails when the table is missing, warns when the oldest row is older than twice the prune retention', () => {
    const c = config();
    expect(checkOutboxRetention(pg(), c, options(), NOW)).toMatchObject({ status: 'ok' });
    expect(
      checkOutboxRetention(
        pg({ slot: slot({ outbox: { table: 'public.outbox', rowsEstimate: null, totalBytes: null, oldestCreatedAt: null } }) }),
        c,
        options(),
        NOW,
      ),
    ).toMatchObject({
      status: 'fail',
    });
    const old = pg({ slot: slot({ outbox: { table: 'public.outbox', rowsEstimate: 9, totalBytes: 1, oldestCreatedAt: '2026-11-20T12:00:00Z' } }) });
    expect(checkOutboxRetention(old, c, options({ pruneOlderThanMs: 7 * 86_400_000 }), NOW)).toMatchObject({ status: 'ok' });
    expect(checkOutboxRetention(old, c, options({ pruneOlderThanMs: 86_400_000 }), NOW)).toMatchObject({
      status: 'warn',
      fix: 'outbox-tail prune --older-than 1d   (schedule it: cron or a systemd timer)',
    });
  });

  it('topics: fail when missing without auto-creation (warn with it), fail with the wrong partition count and say how to fix it', () => {
    const c = config();
    expect(checkTopics(kafka(), c, options())).toMatchObject({ status: 'ok' });
    expect(checkTopics(kafka({ topics: [] }), c, options())).toMatchObject({ status: 'ok' });
    const missing = kafka({ topics: [topic({ exists: false, partitions: null })] });
    expect(checkTopics(missing, c, options())).toMatchObject({ status: 'warn' });
    expect(checkTopics(missing, config({ allowAutoTopicCreation: false }), options({ partitions: 6 }))).toMatchObject({
      status: 'fail',
      fix: 'kafka-topics.sh --bootstrap-server <broker> --create --topic outbox.event.order --partitions 6 --replication-factor <RF>',
    });
    const few = checkTopics(kafka({ topics: [topic({ partitions: 1 })] }), c, options({ partitions: 6 }));
    expect(few).toMatchObject({ status: 'fail', found: 'outbox.event.order has 1 partition(s), not 6' });
    expect(few.fix).toMatch(/^kafka-topics.sh --bootstrap-server <broker> --alter --topic outbox.event.order --partitions 6/);
    expect(checkTopics(kafka({ topics: [topic({ partitions: 12 })] }), c, options({ partitions: 6 })).fix).toMatch(/^recreate/);
  });

  it('expected topics: the template over the outbox rows, a fixed name without rows, and the dead-letter topic', () => {
    const rows = [
      { aggregateType: 'order', eventType: 'A' },
      { aggregateType: 'order', eventType: 'B' },
      { aggregateType: 'pay ment', eventType: 'A' },
    ];
    expect(expectedTopics(config(), rows)).toEqual(['outbox.event.order', 'outbox.event.pay_ment']);
    expect(expectedTopics(config(), [])).toEqual([]);
    expect(expectedTopics(config({ topic: 'events', deadLetterTopic: 'dlq', onOversize: 'dead-letter' }), [])).toEqual(['dlq', 'events']);
    expect(expectedTopics(config({ topic: 'x.{table}' }), [])).toEqual(['x.public.outbox']);
  });

  it('topic pattern: existing topics of the template are found without reading the outbox', () => {
    const p = topicPattern('outbox.event.{aggregate_type}')!;
    expect(p.test('outbox.event.order')).toBe(true);
    expect(p.test('outbox-event-order')).toBe(false);
    expect(p.test('outbox.event.')).toBe(false);
    expect(topicPattern('fixed.name')).toBeNull();
  });

  it('min.insync.replicas: fails above the replication factor, warns on weak or brittle settings, ok on a single broker', () => {
    const c = config();
    expect(checkMinInsyncReplicas(kafka(), c)).toMatchObject({ status: 'ok' });
    const high = checkMinInsyncReplicas(kafka({ brokers: 1, topics: [topic({ replicationFactor: 1, minInsyncReplicas: 2 })] }), c);
    expect(high).toMatchObject({ status: 'fail' });
    expect(high.found).toMatch(/min.insync.replicas 2 > replication factor 1.*NOT_ENOUGH_REPLICAS/);
    expect(high.fix).toBe(
      'kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name outbox.event.order --add-config min.insync.replicas=1',
    );
    expect(checkMinInsyncReplicas(kafka({ topics: [topic({ minInsyncReplicas: 1 })] }), c)).toMatchObject({ status: 'warn' });
    expect(checkMinInsyncReplicas(kafka({ topics: [topic({ replicationFactor: 1, minInsyncReplicas: 1 })] }), c)).toMatchObject({ status: 'warn' });
    expect(checkMinInsyncReplicas(kafka({ topics: [topic({ minInsyncReplicas: 3 })] }), c)).toMatchObject({
      status: 'warn',
      found: expect.stringMatching(/one broker down/),
    });
    expect(checkMinInsyncReplicas(kafka({ brokers: 1, topics: [topic({ replicationFactor: 1, minInsyncReplicas: 1 })] }), c)).toMatchObject({
      status: 'ok',
      found: expect.stringMatching(/single-broker/),
    });
    // The offsets topic counts with exactly-once only.
    const badOffsets = kafka({ offsetsTopic: topic({ name: 'outbox-tail.offsets', replicationFactor: 1, minInsyncReplicas: 2, cleanupPolicy: 'compact' }) });
    expect(checkMinInsyncReplicas(badOffsets, c).status).toBe('ok');
    expect(checkMinInsyncReplicas(badOffsets, config({ delivery: 'exactly-once' })).status).toBe('fail');
  });

  it('compression: warns when a topic makes the broker recompress into another codec than --compression', () => {
    expect(checkCompression(kafka(), config({ compression: 'zstd' }))).toMatchObject({ status: 'ok' });
    expect(checkCompression(kafka({ topics: [topic({ compressionType: 'zstd' })] }), config({ compression: 'zstd' }))).toMatchObject({ status: 'ok' });
    const forced = checkCompression(kafka({ topics: [topic({ compressionType: 'gzip' })] }), config({ compression: 'lz4' }));
    expect(forced).toMatchObject({ status: 'warn' });
    expect(forced.found).toMatch(/outbox.event.order: compression.type=gzip: the broker recompresses the relay's lz4 batches/);
    expect(forced.fix).toMatch(/--add-config compression.type=producer .*or run the relay with --compression gzip/);
  });

  it('retention: warns when retention.ms is shorter than --recovery-window; forever is fine', () => {
    expect(checkRetention(kafka(), options())).toMatchObject({ status: 'ok' });
    expect(checkRetention(kafka({ topics: [topic({ retentionMs: -1 })] }), options())).toMatchObject({ status: 'ok' });
    const short = checkRetention(kafka({ topics: [topic({ retentionMs: 3_600_000 })] }), options());
    expect(short).toMatchObject({ status: 'warn' });
    expect(short.fix).toBe(
      'kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name outbox.event.order --add-config retention.ms=604800000',
    );
  });

  it('offsets topic: checked with exactly-once only; fails when missing or not compacted', () => {
    const eos = config({ delivery: 'exactly-once' });
    expect(checkOffsetsTopic(kafka({ offsetsTopic: topic({ exists: false }) }), config())).toMatchObject({ status: 'ok' });
    expect(checkOffsetsTopic(kafka(), eos)).toMatchObject({ status: 'ok' });
    expect(checkOffsetsTopic(kafka({ offsetsTopic: topic({ name: 'outbox-tail.offsets', exists: false }) }), eos)).toMatchObject({
      status: 'fail',
      fix: 'outbox-tail init --delivery exactly-once   (creates it compacted)',
    });
    expect(checkOffsetsTopic(kafka({ offsetsTopic: topic({ name: 'outbox-tail.offsets', cleanupPolicy: 'delete' }) }), eos)).toMatchObject({
      status: 'fail',
      fix: 'kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name outbox-tail.offsets --add-config cleanup.policy=compact',
    });
  });

  it("transaction timeout: fails when the broker's transaction.max.timeout.ms is below --transaction-timeout-ms", () => {
    expect(checkTransactionTimeout(kafka({ transactionMaxTimeoutMs: 1000 }), config())).toMatchObject({ status: 'ok' });
    expect(checkTransactionTimeout(kafka(), config({ delivery: 'exactly-once' }))).toMatchObject({ status: 'ok' });
    expect(checkTransactionTimeout(kafka(), config({ delivery: 'exactly-once', transactionTimeoutMs: 1_000_000 }))).toMatchObject({
      status: 'fail',
      fix: '--transaction-timeout-ms 900000   (or raise transaction.max.timeout.ms on every broker and restart them)',
    });
    expect(checkTransactionTimeout(kafka({ transactionMaxTimeoutMs: null }), config({ delivery: 'exactly-once' }))).toMatchObject({ status: 'warn' });
  });

  it('postgres TLS: reports what was negotiated and what is verified; unverified TLS and clear text to another host warn', () => {
    const tls = { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' };
    const full = checkPostgresTls(pg({ tls }), config({ pgSslmode: 'verify-full', pgSslrootcert: '/etc/ca.pem' }));
    expect(full).toMatchObject({
      status: 'ok',
      found: 'TLSv1.3 TLS_AES_256_GCM_SHA384; TLS, chain checked against CA /etc/ca.pem and host name checked (verify-full)',
    });
    expect(checkPostgresTls(pg({ tls }), config({ pgSslmode: 'require' }))).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('server not verified'),
      fix: expect.stringContaining('--pg-sslmode verify-full'),
    });
    expect(checkPostgresTls(pg({ tls: null, host: '127.0.0.1' }), config())).toMatchObject({
      status: 'ok',
      found: expect.stringMatching(/^not encrypted; no TLS/),
    });
    expect(checkPostgresTls(pg({ tls: null, host: '/var/run/postgresql' }), config())).toMatchObject({ status: 'ok' });
    expect(checkPostgresTls(pg({ tls: null, host: 'db.internal' }), config())).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('cross the network in clear'),
      fix: expect.stringContaining('--pg-sslmode verify-full'),
    });
  });

  it("kafka TLS: SASL without TLS warns with the mechanism's exposure; TLS reports what is checked", () => {
    const scram = { saslMechanism: 'scram-sha-256', saslUsername: 'relay', saslPassword: 'x' };
    expect(checkKafkaTls(config({ ...scram, kafkaSsl: true, kafkaSslCa: '/etc/kafka-ca.pem' }))).toMatchObject({
      status: 'ok',
      found: 'TLS, chain checked against CA /etc/kafka-ca.pem and host name checked, SASL scram-sha-256',
    });
    expect(checkKafkaTls(config(scram))).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('SCRAM without TLS'),
      fix: expect.stringContaining('--kafka-ssl'),
    });
    expect(checkKafkaTls(config({ ...scram, saslMechanism: 'plain' }))).toMatchObject({ status: 'warn', found: expect.stringContaining('password in clear') });
    expect(checkKafkaTls(config())).toMatchObject({ status: 'ok', found: 'no TLS, no SASL' });
    expect(checkKafkaTls(config({ brokers: 'kafka-0.prod:9092' }))).toMatchObject({ status: 'warn', found: expect.stringContaining('in clear') });
  });

  it('standby decoding: ok with feedback through a physical slot, fails without, waits (primary) for a failover deployment, fails on a primary below logical', () => {
    const standby = (over: Partial<NonNullable<PostgresFacts['standbyDecoding']>> = {}) =>
      pg({
        inRecovery: true,
        serverVersionNum: 160010,
        standbyDecoding: { hotStandbyFeedback: true, primarySlotName: 'standby1', syncReplicationSlots: false, receiverStatus: 'streaming', ...over },
        slot: slot({ standby: { replayLagBytes: 120 } }),
      });
    expect(checkStandbyDecoding(standby(), config(), 'logical')).toMatchObject({
      check: 'postgres standby decoding',
      status: 'ok',
      found: expect.stringContaining('physical slot standby1, WAL receiver streaming, replay lag 120 bytes'),
    });
    expect(checkStandbyDecoding(standby(), config(), null)).toMatchObject({ status: 'ok', found: expect.stringContaining('give --primary-url') });
    expect(checkStandbyDecoding(standby({ hotStandbyFeedback: false }), config(), null)).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('hot_standby_feedback = on'),
    });
    expect(checkStandbyDecoding(standby(), config(), 'replica')).toMatchObject({
      status: 'fail',
      found: expect.stringContaining("primary's wal_level is replica"),
    });
    expect(checkStandbyDecoding(standby({ receiverStatus: null }), config(), 'logical')).toMatchObject({ status: 'warn' });
    expect(checkStandbyDecoding(standby(), config({ failoverSlot: true }), null)).toMatchObject({ check: 'postgres primary', status: 'fail' });
  });

  it('exit code: 0 all ok, 1 with a warn, 2 with a fail (ok, warning, critical as monitoring plugins count)', () => {
    const r = (s: CheckResult['status']): CheckResult => ({ check: 'x', status: s, found: '', fix: null });
    expect(doctorExitCode([r('ok'), r('ok')])).toBe(0);
    expect(doctorExitCode([r('ok'), r('warn')])).toBe(1);
    expect(doctorExitCode([r('warn'), r('fail'), r('ok')])).toBe(2);
  });
});

describe('doctor report table', () => {
  it('prints one row per check, the fix under a row that has one, and the verdict with its exit code', () => {
    const text = formatDoctorReport({
      status: 'warn',
      exitCode: 6,
      postgres: { target: 'db:5432/app', serverVersion: '18.1', database: 'app', user: 'relay' },
      kafka: { brokers: ['k:9092'], brokerCount: 1 },
      checks: [
        { check: 'wal_level', status: 'ok', found: 'logical', fix: null },
        { check: 'max_slot_wal_keep_size', status: 'warn', found: '-1 (unbounded)', fix: "ALTER SYSTEM SET max_slot_wal_keep_size = '1GB'" },
      ],
    });
    expect(text.split('\n')).toEqual([
      'postgres db:5432/app (PostgreSQL 18.1, database app, user relay); kafka k:9092 (1 broker(s))',
      '',
      'CHECK                   STATUS  FOUND',
      'wal_level               ok      logical',
      'max_slot_wal_keep_size  warn    -1 (unbounded)',
      "                                fix: ALTER SYSTEM SET max_slot_wal_keep_size = '1GB'",
      '',
      'warn: 1 ok, 1 warn, 0 fail (exit 6)',
      '',
    ]);
  });
});
