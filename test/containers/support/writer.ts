/**
 * Writes outbox rows from the test process with the project's own helper
 * (writeOutboxEvent, one transaction per batch) and remembers, per row, the
 * WAL position read right after its COMMIT: the commit record ends at or
 * before it, so a slot confirmed at or past that position must have
 * published the row (the relay confirms only what Kafka acknowledged).
 */
import pg from 'pg';
import { writeOutboxEvent } from '../../../src/consumer/write-outbox-event.js';
import { Lsn } from '../../../src/shared/lsn.js';

export interface WrittenRow {
  id: string;
  /** pg_current_wal_lsn() after the commit. */
  lsnAfterCommit: Lsn;
}

export class OutboxWriter {
  readonly rows: WrittenRow[] = [];
  private readonly client: pg.Client;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private seq = 0;

  constructor(
    databaseUrl: string,
    private readonly aggregateType: string,
  ) {
    this.client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
    this.client.on('error', () => undefined);
  }

  async connect(): Promise<this> {
    await this.client.connect();
    return this;
  }

  /** One transaction of `size` rows. */
  async writeBatch(size: number): Promise<string[]> {
    const ids: string[] = [];
    await this.client.query('BEGIN');
    try {
      for (let i = 0; i < size; i++) {
        const n = ++this.seq;
        ids.push(
          await writeOutboxEvent(this.client, {
            aggregateType: this.aggregateType,
            aggregateId: `order-${n % 17}`,
            eventType: 'OrderPlaced',
            payload: { seq: n, total: n * 3 },
            headers: { source: 'containers-test' },
          }),
        );
      }
      await this.client.query('COMMIT');
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    const { rows } = await this.client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const lsn = Lsn.parse(rows[0]!.lsn);
    for (const id of ids) this.rows.push({ id, lsnAfterCommit: lsn });
    return ids;
  }

  async write(count: number, batchSize = 10): Promise<void> {
    for (let done = 0; done < count; done += batchSize) await this.writeBatch(Math.min(batchSize, count - done));
  }

  /** Writes batches every `pauseMs` until stopBackground(). */
  startBackground(batchSize = 5, pauseMs = 10): void {
    this.stopping = false;
    this.loop = (async () => {
      while (!this.stopping) {
        await this.writeBatch(batchSize);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  }

  async stopBackground(): Promise<void> {
    this.stopping = true;
    await this.loop;
    this.loop = undefined;
  }

  ids(): Set<string> {
    return new Set(this.rows.map((r) => r.id));
  }

  async close(): Promise<void> {
    this.stopping = true;
    await this.loop?.catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}

/** The slot's confirmed_flush_lsn (null when the slot never confirmed). */
export async function confirmedFlushLsn(databaseUrl: string, slot: string): Promise<Lsn | null> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ lsn: string | null }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [
      slot,
    ]);
    if (rows.length === 0) throw new Error(`slot ${slot} does not exist`);
    return rows[0]!.lsn === null ? null : Lsn.parse(rows[0]!.lsn);
  } finally {
    await client.end().catch(() => undefined);
  }
}
