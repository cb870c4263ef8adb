import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RelayState, RelayStats } from '../pipeline/relay-stats.js';
import { PgTimestamp } from '../postgres/pg-timestamp.js';
import { isTransactional, type Sink } from '../sink/sink.js';
import { decorateSink } from '../sink/sink-decorator.js';
import type { SinkRecord } from '../sink/sink-record.js';
import { mirroredCounter } from './mirrored-counter.js';

export const RELAY_STATES: readonly RelayState[] = ['starting', 'streaming', 'standby', 'reconnecting', 'stopping', 'stopped'];
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
}

export interface RelayMetrics {
  readonly registry: Registry;
  /** Wraps a sink to observe batches, their sizes and Kafka send time. */
  instrumentSink(sink: Sink): Sink;
  /** From the slot poller (a normal connection reading pg_replication_slots). */
  observeSlot(sample: SlotSample): void;
  slotPollFailed(): void;
  setStalled(stalled: boolean): void;
}

/**
 * The relay's Prometheus metrics in `registry` (never the global one), read
 * from RelayStats at scrape time plus the per-record `onPublished` hook. No
 * outbox ids, keys or payloads ever become labels: the only labels are topic,
 * error code, connection state and wal_status.
 */
export function createRelayMetrics(registry: Registry, stats: RelayStats, options: { version?: string } = {}): RelayMetrics {
  new Gauge({
    name: 'outbox_tail_build_info',
    help: 'Always 1; the version label says which outbox-tail is running',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: options.version ?? 'unknown' }, 1);

  // Counted per record in a plain map and handed to prom-client when it is read: its labelled inc() builds a label
  // hash string and validates the labels on every call, 2% of the relay's busy time in a catch-up profile.
  const publishedSinceRead = new Map<string, number>();
  new Counter({
    name: 'outbox_tail_records_published_total',
    help: 'Outbox records acknowledged by Kafka, by topic (dead-letter pointers excluded)',
    labelNames: ['topic'],
    registers: [registry],
    collect() {
      for (const [topic, n] of publishedSinceRead) this.inc({ topic }, n);
      publishedSinceRead.clear();
    },
  });
  const latency = new Histogram({
    name: 'outbox_tail_publish_latency_seconds',
    help: 'Time from the PostgreSQL commit to the Kafka acknowledgement, per record (clock skew between the hosts included)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  mirroredCounter(registry, 'outbox_tail_dead_lettered_total', 'Records sent to the dead-letter topic instead of their own', () => stats.deadLettered);
  mirroredCounter(
    registry,
    'outbox_tail_transactions_confirmed_total',
    'Transactions confirmed to PostgreSQL (every record acknowledged by Kafka)',
    () => stats.transactionsConfirmed,
  );
  mirroredCounter(
    registry,
    'outbox_tail_events_received_total',
    'Outbox rows decoded from the replication stream (replays after a restart count again)',
    () => stats.eventsReceived,
  );

  const batches = new Counter({ name: 'outbox_tail_batches_total', help: 'Kafka produce requests acknowledged (one sendBatch each)', registers: [registry] });
  const batchRecords = new Histogram({
    name: 'outbox_tail_batch_records',
    help: 'Records per acknowledged Kafka request',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [registry],
  });
  const batchBytes = new Histogram({
    name: 'outbox_tail_batch_bytes',
    help: 'Approximate bytes per acknowledged Kafka request',
    buckets: [1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
    registers: [registry],
  });
  const sendSeconds = new Histogram({
    name: 'outbox_tail_kafka_send_duration_seconds',
    help: 'Duration of Kafka produce requests, by outcome (ok, error)',
    labelNames: ['outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  // Exactly-once only (zero otherwise): how many PostgreSQL transactions a Kafka transaction carries, and what a commit costs.
  mirroredCounter(
    registry,
    'outbox_tail_kafka_transactions_total',
    'Exactly-once: Kafka transactions committed with records (keepalive watermarks excluded)',
    () => stats.kafkaTransactions,
  );
  mirroredCounter(
    registry,
    'outbox_tail_kafka_transaction_pg_transactions_total',
    'Exactly-once: PostgreSQL transactions carried by those Kafka transactions (divided by outbox_tail_kafka_transactions_total: their size)',
    () => stats.kafkaTransactionsPgTransactions,
  );
  const commitSeconds = new Histogram({
    name: 'outbox_tail_kafka_commit_duration_seconds',
    help: 'Exactly-once: watermark produce plus EndTxn of a Kafka transaction, by outcome (ok, error)',
    labelNames: ['outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  new Gauge({
    name: 'outbox_tail_confirmed_lsn',
    help: 'Highest LSN this relay confirmed to the slot (as a number; 0 before the first confirm)',
    registers: [registry],
    collect() {
      this.set(Number(stats.confirmedLsn));
    },
  });
  new Gauge({
    name: 'outbox_tail_last_confirm_timestamp_seconds',
    help: 'Unix time of the last confirm that moved the LSN forward (0 = none yet)',
    registers: [registry],
    collect() {
      this.set(stats.lastConfirmAt / 1000);
    },
  });
  new Gauge({
    name: 'outbox_tail_replication_state',
    help: `Replication connection state: 1 for the current state, 0 for the others (${RELAY_STATES.join(', ')})`,
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const state of RELAY_STATES) this.set({ state }, stats.state === state ? 1 : 0);
    },
  });
  const restartsSeen: Record<string, number> = {};
  new Counter({
    name: 'outbox_tail_restarts_total',
    help: 'Replication sessions that ended in an error, by error code (SLOT_ACTIVE = a standby retry)',
    labelNames: ['cause'],
    registers: [registry],
    collect() {
      for (const [cause, count] of Object.entries(stats.restarts)) {
        const delta = count - (restartsSeen[cause] ?? 0);
        if (delta > 0) this.inc({ cause }, delta);
        restartsSeen[cause] = count;
      }
    },
  });

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

  // Per-record hook: keep it cheap (a count per topic, handed to the counter when it is read).
  const previous = stats.onPublished;
  stats.onPublished = (topic, commitTimeMicros, deadLetter) => {
    previous?.(topic, commitTimeMicros, deadLetter);
    if (!deadLetter) publishedSinceRead.set(topic, (publishedSinceRead.get(topic) ?? 0) + 1);
    const commitMs = PgTimestamp.toUnixMs(commitTimeMicros);
    latency.observe(Math.max(0, Date.now() - commitMs) / 1000);
  };

  let commitSeriesExported = false;

  return {
    registry,
    instrumentSink(sink: Sink): Sink {
      const observeBatch = (records: readonly SinkRecord[]) => {
        if (records.length === 0) return;
        let bytes = 0;
        for (const r of records) bytes += r.bytes;
        batches.inc();
        batchRecords.observe(records.length);
        batchBytes.observe(bytes);
      };
      /** Observes how long `work` took into `histogram`, labelled by its outcome. */
      const timed = async <T>(histogram: Histogram<'outcome'>, started: bigint, work: Promise<T>): Promise<T> => {
        const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
        try {
          const value = await work;
          histogram.observe({ outcome: 'ok' }, seconds());
          return value;
        } catch (error) {
          histogram.observe({ outcome: 'error' }, seconds());
          throw error;
        }
      };
      // Exactly-once: commit() measures the watermark produce (with the last batch, if any) + EndTxn. The Kafka
      // transaction's last batch, sent with the watermark, counts as a batch like the others (its time is the commit's).
      // Both outcomes exported from the first exactly-once session on, at 0: a failure series that appeared only with its
      // first failure would hide that failure from increase() and rate() (no earlier sample), and so from the alert on it.
      if (isTransactional(sink) && !commitSeriesExported) {
        commitSeconds.zero({ outcome: 'ok' });
        commitSeconds.zero({ outcome: 'error' });
        commitSeriesExported = true;
      }
      return decorateSink(sink, {
        async send(records, next) {
          await timed(sendSeconds, process.hrtime.bigint(), next());
          observeBatch(records);
        },
        async commit(records, _position, next) {
          await timed(commitSeconds, process.hrtime.bigint(), next());
          observeBatch(records);
        },
        // The same figure when sealing: from the watermark produce until EndTxn settled.
        async seal(records, _position, next) {
          const sealing = next();
          // A rejected seal or EndTxn is the caller's to handle; here it is only timed.
          timed(
            commitSeconds,
            process.hrtime.bigint(),
            sealing.then(({ committed }) => committed),
          ).catch(() => undefined);
          const sealed = await sealing;
          observeBatch(records);
          return sealed;
        },
      });
    },
    observeSlot(sample: SlotSample): void {
      lastPoll.set(Date.now() / 1000);
      slotActive.set(sample.active ? 1 : 0);
      const status = sample.exists ? (sample.walStatus ?? 'unknown') : 'missing';
      for (const s of WAL_STATUSES) walStatus.set({ wal_status: s }, s === status ? 1 : 0);
      if (sample.lagBytes !== null) lag.set(sample.lagBytes);
      if (sample.retainedWalBytes !== null) retained.set(sample.retainedWalBytes);
      setOrRemove(safeWalSize, sample.exists ? sample.safeWalSizeBytes : null);
      setOrRemove(maxWalKeep, sample.maxSlotWalKeepSizeBytes);
    },
    slotPollFailed(): void {
      pollErrors.inc();
    },
    setStalled(value: boolean): void {
      stalled.set(value ? 1 : 0);
    },
  };
}
