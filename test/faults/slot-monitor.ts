/**
 * Samples the slot every few hundred ms on its own connection (reconnecting
 * through Postgres restarts): confirmed_flush_lsn for the LSN-safety check
 * (I7), restart_lsn and the current WAL position for retained WAL (I9), and
 * which backend holds the slot.
 */
import pg from 'pg';
import { Lsn } from '../../src/shared/lsn.js';

export interface SlotSample {
  /** Date.now() right after the row came back. */
  t: number;
  confirmed: Lsn | null;
  restart: Lsn | null;
  current: Lsn;
  activePid: number | null;
  walStatus: string | null;
  exists: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SlotMonitor {
  readonly samples: SlotSample[] = [];
  private stopping = false;
  private loop: Promise<void> | null = null;
  private client: pg.Client | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly slot: string,
    private readonly intervalMs = 200,
  ) {}

  start(): this {
    this.loop = this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  last(): SlotSample | undefined {
    return this.samples.at(-1);
  }

  /** Largest retained WAL (current - restart_lsn) among samples taken since `since`. */
  maxRetained(since = 0): bigint {
    let max = 0n;
    for (const s of this.samples) if (s.t >= since && s.restart !== null && s.current - s.restart > max) max = s.current - s.restart;
    return max;
  }

  /** One sample now (also used outside the loop). */
  async sample(): Promise<SlotSample> {
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000 });
      client.on('error', () => undefined);
      await client.connect();
      this.client = client;
    }
    try {
      const { rows } = await this.client.query<{
        confirmed: string | null;
        restart: string | null;
        current: string;
        active_pid: number | null;
        wal_status: string | null;
        exists: boolean;
      }>(
        `select s.confirmed_flush_lsn::text as confirmed, s.restart_lsn::text as restart, pg_current_wal_lsn()::text as current,
                s.active_pid, s.wal_status, s.slot_name is not null as exists
           from (select 1) one left join pg_replication_slots s on s.slot_name = $1`,
        [this.slot],
      );
      const r = rows[0]!;
      const sample: SlotSample = {
        t: Date.now(),
        confirmed: r.confirmed ? Lsn.parse(r.confirmed) : null,
        restart: r.restart ? Lsn.parse(r.restart) : null,
        current: Lsn.parse(r.current),
        activePid: r.active_pid,
        walStatus: r.wal_status,
        exists: r.exists,
      };
      this.samples.push(sample);
      return sample;
    } catch (error) {
      const broken = this.client;
      this.client = null;
      void broken?.end().catch(() => undefined);
      throw error;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      await this.sample().catch(() => undefined);
      await sleep(this.intervalMs);
    }
  }
}
