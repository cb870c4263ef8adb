import { Counter, Gauge, type Registry } from 'prom-client';
import type { RelayState, RelayStats } from '../pipeline/relay-stats.js';
import { mirroredCounter } from './mirrored-counter.js';

export const RELAY_STATES: readonly RelayState[] = ['starting', 'streaming', 'standby', 'reconnecting', 'stopping', 'stopped'];

/** The relay's own figures, read from RelayStats when scraped: version, counters, confirmed position, state, restarts. */
export function declareRelayStateMetrics(registry: Registry, stats: RelayStats, version: string): void {
  new Gauge({
    name: 'outbox_tail_build_info',
    help: 'Always 1; the version label says which outbox-tail is running',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: version }, 1);

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
}
