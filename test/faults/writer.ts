/**
 * The steady writer of the fault suite: the crash test's order app (an
 * `orders` row and its outbox row in one transaction, a second write path
 * that cancels, and transactions the application rolls back) at a fixed rate,
 * through every fault. A write that fails (server gone, connection cut) is
 * not retried: its outcome may be unknown, and the recount takes the outbox
 * table as the truth. A broken connection is replaced.
 */
import pg from 'pg';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { cancelOrder, createOrdersTable, ORDER_AGGREGATE } from '../../dev/demo/order-app.js';

export interface WriterOptions {
  databaseUrl: string;
  /** Orders per second (each one transaction; cancellations and rollbacks come on top). */
  ratePerSecond: number;
  concurrency?: number;
  cancelEvery?: number;
  rollbackEvery?: number;
  /** Extra payload bytes per OrderCreated (to fill in-flight limits faster). */
  payloadPadBytes?: number;
  /** A string put in every payload: it must never show up in a log (I12). */
  marker: string;
  /** First order id (several writers on one table: disjoint ranges). */
  firstId?: number;
}

export interface WriterStats {
  attempted: number;
  created: number;
  cancelled: number;
  rolledBack: number;
  errors: number;
  reconnects: number;
  lastError: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function prepareOrderTables(client: pg.ClientBase): Promise<void> {
  await createOrdersTable(client);
  await client.query(
    'create table if not exists shipments (id bigserial primary key, order_id bigint not null, event_id text not null, cancelled boolean not null default false)',
  );
}

export class SteadyWriter {
  readonly stats: WriterStats = { attempted: 0, created: 0, cancelled: 0, rolledBack: 0, errors: 0, reconnects: 0, lastError: null };
  private nextId: number;
  private stopping = false;
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  private inFlight = 0;
  private workers: Promise<void>[] = [];
  private baseTime = 0;
  private baseId = 0;

  constructor(private readonly options: WriterOptions) {
    this.nextId = options.firstId ?? 1;
  }

  start(): this {
    this.baseTime = Date.now();
    this.baseId = this.nextId;
    this.workers = Array.from({ length: this.options.concurrency ?? 2 }, () => this.worker());
    return this;
  }

  /** Holds new writes and waits until the ones in flight are done. */
  async pause(): Promise<void> {
    if (!this.gate) this.gate = new Promise((resolve) => (this.openGate = resolve));
    while (this.inFlight > 0) await sleep(5);
  }

  resume(): void {
    const open = this.openGate;
    this.gate = null;
    this.openGate = null;
    // Do not burst to catch up on the paused time.
    this.baseTime = Date.now();
    this.baseId = this.nextId;
    open?.();
  }

  async stop(): Promise<WriterStats> {
    this.stopping = true;
    this.resume();
    await Promise.all(this.workers);
    return this.stats;
  }

  private async worker(): Promise<void> {
    let client: pg.Client | null = null;
    const rate = this.options.ratePerSecond;
    while (!this.stopping) {
      if (this.gate) {
        await this.gate;
        continue;
      }
      const id = this.nextId++;
      const due = this.baseTime + ((id - this.baseId) / rate) * 1000;
      const now = Date.now();
      if (due > now) await sleep(due - now);
      else if (now - due > 1000) {
        // Behind after an outage: go on at the rate, do not burst.
        this.baseTime = now;
        this.baseId = id;
      }
      if (this.stopping) break;
      if (this.gate) {
        await this.gate;
        continue;
      }
      if (!client) {
        client = await this.connect();
        if (!client) continue;
      }
      this.inFlight++;
      try {
        this.stats.attempted++;
        await this.writeOne(client, id);
      } catch (error) {
        this.stats.errors++;
        this.stats.lastError = (error as Error).message;
        // Whatever failed (mostly a server or path going away), start over on a new connection.
        const broken = client;
        client = null;
        void broken.end().catch(() => undefined);
      } finally {
        this.inFlight--;
      }
    }
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client | null> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl, connectionTimeoutMillis: 5_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      this.stats.reconnects++;
      return client;
    } catch (error) {
      this.stats.lastError = (error as Error).message;
      await client.end().catch(() => undefined);
      await sleep(200);
      return null;
    }
  }

  private async writeOne(client: pg.Client, id: number): Promise<void> {
    const o = this.options;
    const customer = `customer-${id % 97}`;
    const amount = 100 + ((id * 7919) % 90_000);
    await client.query('begin');
    await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, $3)', [id, customer, amount]);
    await writeOutboxEvent(client, {
      aggregateType: ORDER_AGGREGATE,
      aggregateId: String(id),
      eventType: 'OrderCreated',
      payload: { orderId: id, customer, amountCents: amount, note: `${o.marker}${'p'.repeat(o.payloadPadBytes ?? 0)}` },
      headers: { trace_id: `trace-${id}`, source: 'fault-writer' },
    });
    await client.query('commit');
    this.stats.created++;
    if (id % (o.cancelEvery ?? 5) === 0) {
      await cancelOrder(client, id);
      this.stats.cancelled++;
    }
    if (id % (o.rollbackEvery ?? 7) === 0) {
      // Rolled back by the application: its outbox row must never reach Kafka (I2).
      await client.query('begin');
      await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, 1)', [10_000_000 + id, 'rolled-back']);
      await writeOutboxEvent(client, {
        aggregateType: ORDER_AGGREGATE,
        aggregateId: String(10_000_000 + id),
        eventType: 'OrderCreated',
        payload: { orderId: 10_000_000 + id },
      });
      await client.query('rollback');
      this.stats.rolledBack++;
    }
  }
}
