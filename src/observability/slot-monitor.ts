import pg from 'pg';
import type { Logger } from 'pino';
import { readSlotStatus } from '../postgres/slots/slot-status.js';
import { pgConnection, type PgSettings } from '../postgres/pg-connection.js';
import type { RelayStats } from '../pipeline/relay-stats.js';
import { Lsn } from '../shared/lsn.js';
import type { RelayMetrics } from './relay-metrics.js';
import { StallDetector } from './stall-detector.js';

/** The slot to watch, how often (--slot-poll-interval-ms), when it counts as stalled (--stall-timeout-ms), and the connection. */
export interface SlotMonitorSettings extends PgSettings {
  slot: string;
  publication: string;
  slotPollIntervalMs: number;
  stallTimeoutMs: number;
}

export interface SlotMonitorOptions {
  config: SlotMonitorSettings;
  stats: RelayStats;
  metrics: RelayMetrics;
  logger: Logger;
}

/**
 * Polls pg_replication_slots over a normal (non-replication) connection every
 * --slot-poll-interval-ms: slot lag, retained WAL, wal_status, active; feeds
 * the metrics and the stall detector, and logs when a stall starts or ends and
 * when wal_status leaves "reserved".
 */
export class SlotMonitor {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  private failures = 0;
  private lastWalStatus: string | null = null;
  readonly stall: StallDetector;
  private readonly log: Logger;

  constructor(private readonly options: SlotMonitorOptions) {
    this.stall = new StallDetector(options.config.stallTimeoutMs, Date.now());
    this.log = options.logger.child({ component: 'slot-monitor', slot: options.config.slot });
  }

  start(): void {
    this.running = this.poll();
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.poll());
    }, this.options.config.slotPollIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running.catch(() => undefined);
    await this.close();
  }

  /** One poll; never throws. */
  async poll(): Promise<void> {
    if (this.stopped) return;
    const { config, stats, metrics } = this.options;
    let lagBytes: number | null = null;
    try {
      const client = await this.connect();
      const status = await readSlotStatus(client, config.slot, config.publication);
      metrics.observeSlot({ ...status, standbyReplayLagBytes: status.standby?.replayLagBytes ?? null });
      lagBytes = status.lagBytes;
      if (this.failures > 0) this.log.info({ event: 'slot-poll-recovered', failures: this.failures }, 'slot status readable again');
      this.failures = 0;
      const walStatus = status.exists ? status.walStatus : 'missing';
      if (walStatus !== this.lastWalStatus) {
        if (walStatus !== 'reserved' && walStatus !== null) {
          const level = walStatus === 'lost' || walStatus === 'missing' ? 'error' : 'warn';
          this.log[level](
            {
              event: 'slot-wal-status',
              walStatus,
              retainedWalBytes: status.retainedWalBytes,
              code: walStatus === 'lost' ? 'SLOT_INVALIDATED' : walStatus === 'missing' ? 'SLOT_MISSING' : undefined,
              ...(status.invalidation ? { invalidationReason: status.invalidation.reason, hint: status.invalidation.fix } : {}),
            },
            walStatus === 'missing'
              ? 'the replication slot does not exist'
              : walStatus === 'lost'
                ? `slot wal_status is lost: invalidated, cause ${status.invalidation?.reason ?? 'wal_removed'}: ${status.invalidation?.cause ?? 'WAL it needs was removed'}. Fix: ${status.invalidation?.fix ?? 'max_slot_wal_keep_size'} (see the runbook "slot invalidated")`
                : `slot wal_status is ${walStatus}: its WAL is beyond max_wal_size and may be removed (max_slot_wal_keep_size)`,
          );
        } else if (this.lastWalStatus !== null) {
          this.log.info({ event: 'slot-wal-status', walStatus }, `slot wal_status is ${walStatus} again`);
        }
        this.lastWalStatus = walStatus;
      }
    } catch (error) {
      this.failures++;
      metrics.slotPollFailed();
      // once, then every 10th failure: PostgreSQL being down is also reported by the relay itself
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.log.warn({ event: 'slot-poll-failed', failures: this.failures, err: (error as Error).message }, 'cannot read the slot status');
      }
      await this.close();
    }
    const verdict = this.stall.update({ now: Date.now(), state: stats.state, confirmedLsn: stats.confirmedLsn, lagBytes });
    if (verdict.changed) {
      metrics.setStalled(verdict.stalled);
      if (verdict.stalled) {
        this.log.error(
          { event: 'stall', code: 'STALLED', lagBytes, lsn: Lsn.format(stats.confirmedLsn), state: stats.state },
          `relay stalled: ${verdict.reason}`,
        );
      } else {
        this.log.info({ event: 'stall-cleared', lagBytes, lsn: Lsn.format(stats.confirmedLsn), state: stats.state }, 'relay no longer stalled');
      }
    }
  }

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({
      ...pgConnection(this.options.config),
      application_name: 'outbox-tail-monitor',
      query_timeout: Math.max(5_000, this.options.config.slotPollIntervalMs),
    });
    client.on('error', () => undefined); // a dropped connection fails the next query; reconnect then
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return client;
  }

  private async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
