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

export async function createOrdersTable(client: pg.ClientBase): Promise<void> {
  await client.query(`create table if not exists orders (
    id bigint primary key,
    customer text not null,
    amount_cents integer not null,
    status text not null default 'created',
    created_at timestamptz not null default now(),
    cancelled_at timestamptz)`);
}

/** One order and its OrderCreated event, in one transaction. */
export async function createOrder(client: pg.ClientBase, id: number): Promise<string> {
  await client.query('begin');
  try {
    const customer = `customer-${id % 97}`;
    const amount = 100 + ((id * 7919) % 90_000);
    await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, $3)', [id, customer, amount]);
    const eventId = await writeOutboxEvent(client, {
      aggregateType: ORDER_AGGREGATE,
      aggregateId: String(id),
      eventType: 'OrderCreated',
      payload: { orderId: id, customer, amountCents: amount, lines: [{ sku: `sku-${id % 13}`, qty: 1 + (id % 3) }] },
    });
    await client.query('commit');
    return eventId;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/** The second write path: cancel an order and write OrderCancelled, in one transaction. */
export async function cancelOrder(client: pg.ClientBase, id: number): Promise<string> {
  await client.query('begin');
  try {
    const updated = await client.query(`update orders set status = 'cancelled', cancelled_at = now() where id = $1 and status = 'created'`, [id]);
    if (updated.rowCount !== 1) throw new Error(`order ${id} cannot be cancelled`);
    const eventId = await writeOutboxEvent(client, {
      aggregateType: ORDER_AGGREGATE,
      aggregateId: String(id),
      eventType: 'OrderCancelled',
      payload: { orderId: id, reason: 'customer request' },
    });
    await client.query('commit');
    return eventId;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}
