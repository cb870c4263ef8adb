import { hostname } from 'node:os';
import pg, { type ClientConfig } from 'pg';
import type { Logger } from 'pino';
import { Lsn } from '../../shared/lsn.js';

/** The frontier as the current session's checkpointer has it. */
export interface FrontierPosition {
  readonly frontierCommitTime: bigint | null;
  readonly safeLsn: Lsn;
}

export interface PositionRecorderOptions {
  connection: ClientConfig;
  slot: string;
  intervalMs: number;
  logger: Logger;
  /** The frontier of the session streaming now, or null between sessions. */
  frontier: () => FrontierPosition | null;
}

/** Undefined table (migration 0004 not applied) or no privilege: recording is off, the relay itself is fine. */
const CANNOT_RECORD = new Set(['42P01', '42501']);

const UPSERT = `insert into outbox_tail_relay_position as p (slot, frontier_commit_time, frontier_lsn, relay, updated_at)
  values ($1, timestamptz '2000-01-01 00:00:00+00' + $2::bigint * interval '1 microsecond', $3::pg_lsn, $4, now())
  on conflict (slot) do update set
    frontier_commit_time = greatest(p.frontier_commit_time, excluded.frontier_commit_time),
    frontier_lsn = greatest(p.frontier_lsn, excluded.frontier_lsn),
    relay = excluded.relay, updated_at = now()`;

/**
 * Writes, every few seconds while it moves, the commit time of the last
 * transaction behind the ack frontier into outbox_tail_relay_position: a
 * position kept outside the slot, which `outbox-tail recover` backfills
 * from when the slot is lost. Best effort by design: a failed write is
 * retried at the next tick and never stops the relay; what it writes only
 * ever trails what Kafka holds, so a stale value costs duplicates, not loss.
 */
export class PositionRecorder {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private written: bigint | null = null;
  private disabled = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly relayId = `${hostname()}:${process.pid}`;

  constructor(private readonly options: PositionRecorderOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      this.writing = this.writing.then(() => this.record());
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** A last write (a drained relay's final frontier), then the connection closes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.writing;
    await this.record();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async record(): Promise<void> {
    const frontier = this.options.frontier();
    const time = frontier?.frontierCommitTime ?? null;
    if (this.disabled || frontier === null || time === null || (this.written !== null && time <= this.written)) return;
    try {
      if (!this.client) {
        const client = new pg.Client({ ...this.options.connection, application_name: 'outbox-tail position' });
        client.on('error', () => undefined);
        await client.connect();
        this.client = client;
      }
      await this.client.query(UPSERT, [this.options.slot, time.toString(), Lsn.format(frontier.safeLsn), this.relayId]);
      this.written = time;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code && CANNOT_RECORD.has(code)) {
        this.disabled = true;
        this.options.logger.warn(
          {
            event: 'position-not-recorded',
            code,
            err: (error as Error).message,
            hint: 'apply migrations/0004_relay_position.sql (outbox-tail init) and grant SELECT, INSERT, UPDATE on it to the relay role (docker/least-privilege.sql)',
          },
          'cannot write outbox_tail_relay_position: outbox-tail recover will need --since after a lost slot',
        );
      } else {
        this.options.logger.debug({ event: 'position-write-failed', err: (error as Error).message }, 'position write failed; retrying at the next tick');
      }
      await this.client?.end().catch(() => undefined);
      this.client = null;
    }
  }
}
