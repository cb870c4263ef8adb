import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConsumerStats } from '../../../src/consumer/consumer-stats.js';
import { registerConsumerMetrics } from '../../../src/observability/consumer-metrics.js';
import { createRelayMetrics } from '../../../src/observability/relay-metrics.js';
import { RelayStats } from '../../../src/pipeline/relay-stats.js';
import { Lsn } from '../../../src/shared/lsn.js';
import type { TransactionalSink } from '../../../src/sink/sink.js';
import type { SinkRecord } from '../../../src/sink/sink-record.js';
import { fakeSink, fakeTransactionalSink } from '../../support/fake-sinks.js';

const PG_EPOCH_MS = 946_684_800_000;
const micros = (unixMs: number) => BigInt(unixMs - PG_EPOCH_MS) * 1000n;

/** value of one sample line (name{labels} value) in the Prometheus text format. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const record = (topic: string, bytes = 100): SinkRecord => ({ topic, key: 'k', value: Buffer.from('v'), headers: {}, bytes });

describe('relay metrics', () => {
  it('reads RelayStats at scrape time and follows Prometheus naming', async () => {
    const registry = new Registry();
    const stats = new RelayStats();
    const metrics = createRelayMetrics(registry, stats, { version: '9.9.9' });

    stats.state = 'streaming';
    stats.transactionsConfirmed = 3;
    stats.deadLettered = 1;
    stats.confirmedLsn = Lsn.of(0x1_0000_0200n);
    stats.lastConfirmAt = 1_700_000_000_000;
    stats.restarts = { KAFKA_UNREACHABLE: 2, SLOT_ACTIVE: 5 };
    const now = Date.now();
    stats.onPublished!('outbox.event.order', micros(now - 250), false);
    stats.onPublished!('outbox.event.order', micros(now - 250), false);
    stats.onPublished!('outbox.event.customer', micros(now - 250), false);
    stats.onPublished!('outbox.dead-letter', micros(now - 250), true);
    metrics.observeSlot({ exists: true, active: true, lagBytes: 4096, retainedWalBytes: 8192, walStatus: 'reserved' });

    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_records_published_total{topic="outbox.event.order"}')).toBe(2);
    expect(sample(text, 'outbox_tail_records_published_total{topic="outbox.event.customer"}')).toBe(1);
    expect(sample(text, 'outbox_tail_records_published_total{topic="outbox.dead-letter"}')).toBeUndefined();
    expect(sample(text, 'outbox_tail_dead_lettered_total')).toBe(1);
    expect(sample(text, 'outbox_tail_transactions_confirmed_total')).toBe(3);
    expect(sample(text, 'outbox_tail_confirmed_lsn')).toBe(0x1_0000_0200);
    expect(sample(text, 'outbox_tail_last_confirm_timestamp_seconds')).toBe(1_700_000_000);
    expect(sample(text, 'outbox_tail_replication_state{state="streaming"}')).toBe(1);
    expect(sample(text, 'outbox_tail_replication_state{state="standby"}')).toBe(0);
    expect(sample(text, 'outbox_tail_restarts_total{cause="KAFKA_UNREACHABLE"}')).toBe(2);
    expect(sample(text, 'outbox_tail_restarts_total{cause="SLOT_ACTIVE"}')).toBe(5);
    expect(sample(text, 'outbox_tail_slot_lag_bytes')).toBe(4096);
    expect(sample(text, 'outbox_tail_slot_retained_wal_bytes')).toBe(8192);
    expect(sample(text, 'outbox_tail_slot_wal_status{wal_status="reserved"}')).toBe(1);
    expect(sample(text, 'outbox_tail_slot_wal_status{wal_status="lost"}')).toBe(0);
    expect(sample(text, 'outbox_tail_slot_active')).toBe(1);
    expect(sample(text, 'outbox_tail_build_info{version="9.9.9"}')).toBe(1);
    // latency: 4 records observed, each about 0.25 s after its commit
    expect(sample(text, 'outbox_tail_publish_latency_seconds_count')).toBe(4);
    expect(sample(text, 'outbox_tail_publish_latency_seconds_bucket{le="0.1"}')).toBe(0);
    expect(sample(text, 'outbox_tail_publish_latency_seconds_bucket{le="1"}')).toBe(4);

    // counters mirror growth between scrapes, and restart from zero when a session's count resets
    stats.transactionsConfirmed = 5;
    stats.restarts.KAFKA_UNREACHABLE = 3;
    let again = await registry.metrics();
    expect(sample(again, 'outbox_tail_transactions_confirmed_total')).toBe(5);
    expect(sample(again, 'outbox_tail_restarts_total{cause="KAFKA_UNREACHABLE"}')).toBe(3);
    stats.transactionsConfirmed = 2; // a new session's checkpointer counts from 0
    again = await registry.metrics();
    expect(sample(again, 'outbox_tail_transactions_confirmed_total')).toBe(7);

    // names: outbox_tail_ prefix, counters end in _total, units in the name
    const families = (await registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('outbox_tail_'));
    for (const m of families) {
      if (String(m.type) === 'counter') expect(m.name).toMatch(/_total$/);
      else expect(m.name).not.toMatch(/_total$/);
      expect(m.name).toMatch(/^outbox_tail_[a-z_]+$/);
    }
  });

  it('observes batches, batch sizes and Kafka send time through the sink wrapper', async () => {
    const registry = new Registry();
    const metrics = createRelayMetrics(registry, new RelayStats());
    let fail = false;
    const inner = fakeSink({
      send: async () => {
        if (fail) throw new Error('broker down');
      },
    });
    const sink = metrics.instrumentSink(inner);
    await sink.send([record('a', 1000), record('a', 1000), record('b', 1000)]);
    await sink.send([record('a', 500)]);
    fail = true;
    await expect(sink.send([record('a')])).rejects.toThrow('broker down');
    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_batches_total')).toBe(2);
    expect(sample(text, 'outbox_tail_batch_records_count')).toBe(2);
    expect(sample(text, 'outbox_tail_batch_records_sum')).toBe(4);
    expect(sample(text, 'outbox_tail_batch_bytes_sum')).toBe(3500);
    expect(sample(text, 'outbox_tail_kafka_send_duration_seconds_count{outcome="ok"}')).toBe(2);
    expect(sample(text, 'outbox_tail_kafka_send_duration_seconds_count{outcome="error"}')).toBe(1);
  });

  it('exactly-once: counts Kafka transactions and what they carried, times commits, and counts a batch sent with its watermark', async () => {
    const registry = new Registry();
    const stats = new RelayStats();
    const metrics = createRelayMetrics(registry, stats);
    const inner = fakeTransactionalSink();
    const sink = metrics.instrumentSink(inner) as TransactionalSink;
    const position = { lsn: Lsn.of(10n), commitLsn: Lsn.of(5n), commitTime: null, count: 3 };
    await sink.send([record('a', 100), record('a', 100)]);
    await sink.commit(position, [record('a', 100)]);
    await sink.commit(position);
    stats.kafkaTransactions = 2;
    stats.kafkaTransactionsPgTransactions = 7;
    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_kafka_transactions_total')).toBe(2);
    expect(sample(text, 'outbox_tail_kafka_transaction_pg_transactions_total')).toBe(7);
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="ok"}')).toBe(2);
    expect(sample(text, 'outbox_tail_batches_total')).toBe(2);
    expect(sample(text, 'outbox_tail_batch_records_sum')).toBe(3);
    expect(sample(text, 'outbox_tail_kafka_send_duration_seconds_count{outcome="ok"}')).toBe(1);
  });

  it('exactly-once: times a sealed Kafka transaction until its EndTxn settled, and counts a failed EndTxn as an error', async () => {
    const registry = new Registry();
    const metrics = createRelayMetrics(registry, new RelayStats());
    let endTxn!: { resolve: () => void; reject: (e: Error) => void };
    const inner = fakeTransactionalSink({
      seal: async () => ({ committed: new Promise<void>((resolve, reject) => (endTxn = { resolve, reject })) }),
    });
    const sink = metrics.instrumentSink(inner) as TransactionalSink;
    const position = { lsn: Lsn.of(10n), commitLsn: Lsn.of(5n), commitTime: null, count: 1 };
    const first = await sink.seal(position, [record('a', 100)]);
    // Sealed, EndTxn pending: no commit timed yet (no sample at all).
    expect(sample(await registry.metrics(), 'outbox_tail_kafka_commit_duration_seconds_count{outcome="ok"}') ?? 0).toBe(0);
    expect(sample(await registry.metrics(), 'outbox_tail_batches_total')).toBe(1);
    endTxn.resolve();
    await first.committed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sample(await registry.metrics(), 'outbox_tail_kafka_commit_duration_seconds_count{outcome="ok"}')).toBe(1);
    const second = await sink.seal(position);
    endTxn.reject(new Error('EndTxn failed'));
    await expect(second.committed).rejects.toThrow('EndTxn failed');
    await new Promise((resolve) => setImmediate(resolve));
    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="ok"}')).toBe(1);
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="error"}')).toBe(1);
  });

  it('reports a missing slot and a lost slot as wal_status states', async () => {
    const registry = new Registry();
    const metrics = createRelayMetrics(registry, new RelayStats());
    metrics.observeSlot({ exists: false, active: false, lagBytes: null, retainedWalBytes: null, walStatus: null });
    expect(sample(await registry.metrics(), 'outbox_tail_slot_wal_status{wal_status="missing"}')).toBe(1);
    metrics.observeSlot({ exists: true, active: false, lagBytes: 10, retainedWalBytes: null, walStatus: 'lost' });
    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_slot_wal_status{wal_status="lost"}')).toBe(1);
    expect(sample(text, 'outbox_tail_slot_wal_status{wal_status="missing"}')).toBe(0);
  });

  it('exports safe_wal_size and max_slot_wal_keep_size only while PostgreSQL reports them', async () => {
    const registry = new Registry();
    const metrics = createRelayMetrics(registry, new RelayStats());
    // before the first poll: no made-up value a rule could compare against
    let text = await registry.metrics();
    expect(text).toContain('# TYPE outbox_tail_slot_safe_wal_size_bytes gauge');
    expect(sample(text, 'outbox_tail_slot_safe_wal_size_bytes')).toBeUndefined();
    expect(sample(text, 'outbox_tail_slot_max_wal_keep_size_bytes')).toBeUndefined();
    const slot = { exists: true, active: true, lagBytes: 10, retainedWalBytes: 100, walStatus: 'reserved' };
    metrics.observeSlot({ ...slot, safeWalSizeBytes: 700 * 2 ** 20, maxSlotWalKeepSizeBytes: 2 ** 30 });
    text = await registry.metrics();
    expect(sample(text, 'outbox_tail_slot_safe_wal_size_bytes')).toBe(700 * 2 ** 20);
    expect(sample(text, 'outbox_tail_slot_max_wal_keep_size_bytes')).toBe(2 ** 30);
    // unreserved: PostgreSQL reports a negative safe size
    metrics.observeSlot({ ...slot, walStatus: 'unreserved', safeWalSizeBytes: -4096, maxSlotWalKeepSizeBytes: 2 ** 30 });
    expect(sample(await registry.metrics(), 'outbox_tail_slot_safe_wal_size_bytes')).toBe(-4096);
    // max_slot_wal_keep_size = -1: no safe size, the setting says unlimited
    metrics.observeSlot({ ...slot, safeWalSizeBytes: null, maxSlotWalKeepSizeBytes: -1 });
    text = await registry.metrics();
    expect(sample(text, 'outbox_tail_slot_safe_wal_size_bytes')).toBeUndefined();
    expect(sample(text, 'outbox_tail_slot_max_wal_keep_size_bytes')).toBe(-1);
    // the slot gone: no safe size whatever a sample says
    metrics.observeSlot({ ...slot, exists: false, safeWalSizeBytes: 5, maxSlotWalKeepSizeBytes: 2 ** 30 });
    expect(sample(await registry.metrics(), 'outbox_tail_slot_safe_wal_size_bytes')).toBeUndefined();
  });

  it('exactly-once: exports both commit outcomes at 0 from the first session, and keeps their counts across sessions', async () => {
    const registry = new Registry();
    const metrics = createRelayMetrics(registry, new RelayStats());
    const { connect, disconnect, metadata, send } = fakeTransactionalSink();
    metrics.instrumentSink({ connect, disconnect, metadata, send }); // at-least-once: no commit series at all
    expect(sample(await registry.metrics(), 'outbox_tail_kafka_commit_duration_seconds_count{outcome="error"}')).toBeUndefined();
    const first = metrics.instrumentSink(fakeTransactionalSink({ commit: async () => Promise.reject(new Error('EndTxn failed')) })) as TransactionalSink;
    let text = await registry.metrics();
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="error"}')).toBe(0);
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="ok"}')).toBe(0);
    const position = { lsn: Lsn.of(10n), commitLsn: Lsn.of(5n), commitTime: null, count: 1 };
    await expect(first.commit(position)).rejects.toThrow('EndTxn failed');
    metrics.instrumentSink(fakeTransactionalSink()); // the next session's sink
    text = await registry.metrics();
    expect(sample(text, 'outbox_tail_kafka_commit_duration_seconds_count{outcome="error"}')).toBe(1);
  });

  it('chains an onPublished hook that was already installed', () => {
    const stats = new RelayStats();
    const seen: string[] = [];
    stats.onPublished = (topic) => seen.push(topic);
    createRelayMetrics(new Registry(), stats);
    stats.onPublished!('t', micros(Date.now()), false);
    expect(seen).toEqual(['t']);
  });
});

describe('registerConsumerMetrics', () => {
  it('exposes the consumer counters and state from its stats object', async () => {
    const registry = new Registry();
    const stats = {
      state: 'running',
      processed: 10,
      duplicatesSkipped: 2,
      handlerFailures: 1,
      deadLettered: 1,
      poisonRecords: 0,
      transientRetries: 0,
      offsetCommits: 4,
    };
    registerConsumerMetrics(registry, stats);
    let text = await registry.metrics();
    expect(sample(text, 'outbox_tail_consumer_processed_total')).toBe(10);
    expect(sample(text, 'outbox_tail_consumer_duplicates_skipped_total')).toBe(2);
    expect(sample(text, 'outbox_tail_consumer_handler_failures_total')).toBe(1);
    expect(sample(text, 'outbox_tail_consumer_dead_lettered_total')).toBe(1);
    expect(sample(text, 'outbox_tail_consumer_offset_commits_total')).toBe(4);
    expect(sample(text, 'outbox_tail_consumer_state{state="running"}')).toBe(1);
    stats.processed = 15;
    stats.state = 'stopped';
    text = await registry.metrics();
    expect(sample(text, 'outbox_tail_consumer_processed_total')).toBe(15);
    expect(sample(text, 'outbox_tail_consumer_state{state="stopped"}')).toBe(1);
  });

  it("accepts the consumer module's ConsumerStats", async () => {
    const registry = new Registry();
    const stats = new ConsumerStats();
    registerConsumerMetrics(registry, stats);
    stats.processed = 3;
    stats.duplicatesSkipped = 1;
    expect(sample(await registry.metrics(), 'outbox_tail_consumer_processed_total')).toBe(3);
    expect(sample(await registry.metrics(), 'outbox_tail_consumer_duplicates_skipped_total')).toBe(1);
  });

  it('works with the minimal stats shape', async () => {
    const registry = new Registry();
    registerConsumerMetrics(registry, { processed: 1, duplicatesSkipped: 0, handlerFailures: 0, deadLettered: 0 });
    const text = await registry.metrics();
    expect(sample(text, 'outbox_tail_consumer_processed_total')).toBe(1);
    expect(text).not.toContain('outbox_tail_consumer_state');
  });
});
