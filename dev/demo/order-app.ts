import type pg from 'pg';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';

/**
 * The example application of the demo, the crash test and the benchmark: an
 * `orders` table whose every change writes its outbox row in the same
 * transaction, through the one typed write path. Two write paths (created,
 * cancelled) so the crash test can check "rows = outbox rows" per path, the
 * article's point about new write paths.
 */
export const ORDER_AGGREGATE = 'order';

/**
 * How the app writes its events: outbox rows, or logical decoding messages
 * (relay --source messages): OrderCreated through the SQL function
 * outbox_tail.emit(), OrderCancelled through writeOutboxEvent(..., { via:
 * 'message' }), so both write paths of the table-less outbox are exercised.
 * With messages there is no outbox table to recount from, so the order row
 * keeps the id of each event it wrote, committed in the same transaction.
 */
export type EventVia = 'table' | 'message';

export interface OrderWriteOptions {
  via?: EventVia;
  /** via message: emit one more event in a savepoint that is rolled back (it must never reach Kafka). */
  savepointRollback?: boolean;
  /** via message, a sharded outbox: writeOutboxEvent's `shards` (outbox_tail.emit reads it from outbox_tail.message_shards). */
  shards?: number;
}

export async function createOrdersTable(client: pg.ClientBase): Promise<void> {
  await client.query(`create table if not exists orders (
    id bigint primary key,
    customer text not null,
    amount_cents integer not null,
    status text not null default 'created',
    created_at timestamptz not null default now(),
    cancelled_at timestamptz,
    created_event_id text,
    cancelled_event_id text)`);
}

/**
 * The committed events, as a query of one column `id`: the outbox rows, or via
 * message the event ids the order rows committed with (there is no outbox
 * table to count). `eventType` narrows it to one write path.
 */
export function committedEventIdsSql(via: EventVia, eventType: 'OrderCreated' | 'OrderCancelled' | null = null): string {
  if (via === 'table') return `select id::text from outbox${eventType ? ` where event_type = '${eventType}'` : ''}`;
  return [
    ...(eventType !== 'OrderCancelled' ? ['select created_event_id as id from orders where created_event_id is not null'] : []),
    ...(eventType !== 'OrderCreated' ? ['select cancelled_event_id as id from orders where cancelled_event_id is not null'] : []),
  ].join(' union all ');
}

/** The OrderCancelled payload of order `id` (what cancelOrder writes). */
export function orderCancelledPayload(id: number): { orderId: number; reason: string } {
  return { orderId: id, reason: 'customer request' };
}

/** One order and its OrderCreated event, in one transaction. */
export async function createOrder(client: pg.ClientBase, id: number, options: OrderWriteOptions = {}): Promise<string> {
  await client.query('begin');
  try {
    const customer = `customer-${id % 97}`;
    const amount = 100 + ((id * 7919) % 90_000);
    const payload = { orderId: id, customer, amountCents: amount, lines: [{ sku: `sku-${id % 13}`, qty: 1 + (id % 3) }] };
    let eventId: string;
    if (options.via === 'message') {
      if (options.savepointRollback) {
        await client.query('savepoint before_order');
        await emitOrderCreated(client, id, { ...payload, rolledBack: true });
        await client.query('rollback to savepoint before_order');
      }
      eventId = await emitOrderCreated(client, id, payload);
      await client.query('insert into orders(id, customer, amount_cents, created_event_id) values ($1, $2, $3, $4)', [id, customer, amount, eventId]);
    } else {
      await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, $3)', [id, customer, amount]);
      eventId = await writeOutboxEvent(client, { aggregateType: ORDER_AGGREGATE, aggregateId: String(id), eventType: 'OrderCreated', payload });
    }
    await client.query('commit');
    return eventId;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/** The second write path: cancel an order and write OrderCancelled, in one transaction. */
export async function cancelOrder(client: pg.ClientBase, id: number, options: OrderWriteOptions = {}): Promise<string> {
  await client.query('begin');
  try {
    const eventId = await writeOutboxEvent(
      client,
      { aggregateType: ORDER_AGGREGATE, aggregateId: String(id), eventType: 'OrderCancelled', payload: orderCancelledPayload(id) },
      { via: options.via ?? 'table', ...(options.shards !== undefined ? { shards: options.shards } : {}) },
    );
    const updated = await client.query(
      `update orders set status = 'cancelled', cancelled_at = now(), cancelled_event_id = $2 where id = $1 and status = 'created'`,
      [id, options.via === 'message' ? eventId : null],
    );
    if (updated.rowCount !== 1) throw new Error(`order ${id} cannot be cancelled`);
    await client.query('commit');
    return eventId;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/** OrderCreated through the SQL write path of the table-less outbox (migrations/0003_emit_message.sql). */
async function emitOrderCreated(client: pg.ClientBase, id: number, payload: object): Promise<string> {
  const { rows } = await client.query<{ id: string }>(`select outbox_tail.emit($1, $2, 'OrderCreated', $3::jsonb)::text as id`, [
    ORDER_AGGREGATE,
    String(id),
    JSON.stringify(payload),
  ]);
  return rows[0]!.id;
}
