/**
 * The steady writer of the fault suite: the crash test's order app (an
 * `orders` row and its outbox row in one transaction, a second write path
 * that cancels, and transactions the application rolls back) at a fixed rate,
 * through every fault. A write that fails (server gone, connection cut) is
 * not retried: its outcome may be unknown, and the recount takes the outbox
 * table as the truth. A broken connection is replaced.
 *
 * via 'message' (relay --source messages): the same orders, their events
 * written as logical decoding messages: OrderCreated with outbox_tail.emit()
 * (plus, on some orders, one more emitted in a savepoint that is rolled back),
 * OrderCancelled and the rolled-back transactions with writeOutboxEvent(...,
 * { via: 'message' }). There is no outbox table: the order rows keep the ids of
 * the events they committed with (as in the crash test), and the recount
 * rebuilds the rows it checks from them (messageEventRows).
 */
import pg from 'pg';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { cancelOrder, committedEventIdsSql, createOrdersTable, ORDER_AGGREGATE, orderCancelledPayload, type EventVia } from '../../dev/demo/order-app.js';
import type { OutboxRow } from './recount.js';

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
  /** How events are written: outbox rows (default) or logical decoding messages. */
  via?: EventVia;
}

export interface WriterStats {
  attempted: number;
  created: number;
  cancelled: number;
  rolledBack: number;
  /** via message: committed orders with an event emitted in a rolled-back savepoint. */
  savepointRollbacks: number;
  errors: number;
  reconnects: number;
  lastError: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function prepareOrderTables(client: pg.ClientBase, via: EventVia = 'table'): Promise<void> {
  await createOrdersTable(client);
  await client.query(
    'create table if not exists shipments (id bigserial primary key, order_id bigint not null, event_id text not null, cancelled boolean not null default false)',
  );
  // via message: what a scenario emits outside the order app (big-transaction's bulk events), recorded in the same transaction.
  if (via === 'message') await client.query('create table if not exists bulk_events (id text primary key, aggregate_id text not null, payload text not null)');
}

/** The `note` of every OrderCreated payload: the marker (I12) and the padding. */
export function writerNote(marker: string, payloadPadBytes = 0): string {
  return `${marker}${'p'.repeat(payloadPadBytes)}`;
}

/** The committed event ids, as a query of one column `id` (with messages: from the order rows and bulk_events). */
export function committedIdsSql(via: EventVia): string {
  return via === 'message' ? `${committedEventIdsSql('message')} union all select id from bulk_events` : committedEventIdsSql('table');
}

/**
 * One order and its OrderCreated event in one transaction (its id is the
 * order's): an outbox row, or a message through outbox_tail.emit(), whose id
 * the order row keeps. `savepointRollback` (messages): one more event emitted
 * in a savepoint that is rolled back, never to be sent.
 */
export async function writeOrderCreated(
  client: pg.ClientBase,
  order: { id: number; customer: string; amountCents: number; note: string },
  options: { via?: EventVia; savepointRollback?: boolean } = {},
): Promise<string> {
  const { id, customer, amountCents } = order;
  const payload = { orderId: id, customer, amountCents, note: order.note };
  const headers = { trace_id: `trace-${id}`, source: 'fault-writer' };
  await client.query('begin');
  try {
    let eventId: string;
    if (options.via === 'message') {
      const emit = async (p: object) =>
        (
          await client.query<{ id: string }>(`select outbox_tail.emit($1, $2, 'OrderCreated', $3::jsonb, $4::jsonb)::text as id`, [
            ORDER_AGGREGATE,
            String(id),
            JSON.stringify(p),
            JSON.stringify(headers),
          ])
        ).rows[0]!.id;
      if (options.savepointRollback) {
        await client.query('savepoint before_event');
        await emit({ ...payload, rolledBack: true });
        await client.query('rollback to savepoint before_event');
      }
      eventId = await emit(payload);
      await client.query('insert into orders(id, customer, amount_cents, created_event_id) values ($1, $2, $3, $4)', [id, customer, amountCents, eventId]);
    } else {
      await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, $3)', [id, customer, amountCents]);
      eventId = await writeOutboxEvent(client, { aggregateType: ORDER_AGGREGATE, aggregateId: String(id), eventType: 'OrderCreated', payload, headers });
    }
    await client.query('commit');
    return eventId;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/**
 * via message: the rows the recount checks (outboxRows' shape), rebuilt from
 * what committed with the messages: the order rows' event ids and columns
 * (OrderCreated through jsonb, as outbox_tail.emit normalises it; OrderCancelled
 * as writeOutboxEvent sends it, byte for byte) and bulk_events.
 */
export async function messageEventRows(client: pg.ClientBase, note: string): Promise<OutboxRow[]> {
  const created = await client.query<OutboxRow>(
    `select created_event_id as id, id::text as aggregate_id, 'OrderCreated' as event_type,
            jsonb_build_object('orderId', id, 'customer', customer, 'amountCents', amount_cents, 'note', $1::text)::text as payload,
            jsonb_build_object('trace_id', 'trace-' || id, 'source', 'fault-writer')::text as headers
       from orders where created_event_id is not null`,
    [note],
  );
  const cancelled = await client.query<{ id: string; order_id: string }>(
    'select cancelled_event_id as id, id::text as order_id from orders where cancelled_event_id is not null',
  );
  const bulk = await client.query<OutboxRow>(`select id, aggregate_id, 'Bulk' as event_type, payload, null as headers from bulk_events`);
  return [
    ...created.rows,
    ...cancelled.rows.map((r) => ({
      id: r.id,
      aggregate_id: r.order_id,
      event_type: 'OrderCancelled',
      payload: JSON.stringify(orderCancelledPayload(Number(r.order_id))),
      headers: null,
    })),
    ...bulk.rows,
  ];
}

export class SteadyWriter {
  readonly stats: WriterStats = { attempted: 0, created: 0, cancelled: 0, rolledBack: 0, savepointRollbacks: 0, errors: 0, reconnects: 0, lastError: null };
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

  /** The note every OrderCreated payload of this writer carries. */
  get note(): string {
    return writerNote(this.options.marker, this.options.payloadPadBytes);
  }

  private async writeOne(client: pg.Client, id: number): Promise<void> {
    const o = this.options;
    const via = o.via ?? 'table';
    const rollbackEvery = o.rollbackEvery ?? 7;
    const customer = `customer-${id % 97}`;
    const amountCents = 100 + ((id * 7919) % 90_000);
    // Savepoint rollbacks (messages) on other orders than the rolled-back transactions below.
    const savepointRollback = via === 'message' && id % rollbackEvery === 3;
    await writeOrderCreated(client, { id, customer, amountCents, note: this.note }, { via, savepointRollback });
    this.stats.created++;
    if (savepointRollback) this.stats.savepointRollbacks++;
    if (id % (o.cancelEvery ?? 5) === 0) {
      await cancelOrder(client, id, { via });
      this.stats.cancelled++;
    }
    if (id % rollbackEvery === 0) {
      // Rolled back by the application: its outbox row (or message) must never reach Kafka (I2).
      await client.query('begin');
      await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, 1)', [10_000_000 + id, 'rolled-back']);
      await writeOutboxEvent(
        client,
        { aggregateType: ORDER_AGGREGATE, aggregateId: String(10_000_000 + id), eventType: 'OrderCreated', payload: { orderId: 10_000_000 + id } },
        { via },
      );
      await client.query('rollback');
      this.stats.rolledBack++;
    }
  }
}
