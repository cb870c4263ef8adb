/**
 * The write side of the table-less outbox (issue 14, "measure what it buys"):
 * the same order workload (one `orders` row and its OrderCreated event per
 * transaction, the same ~300-byte payload) written for the same time by
 * `concurrency` clients as fast as they go, with the event as
 *   table    an outbox row (writeOutboxEvent, the default path),
 *   message  a logical decoding message (writeOutboxEvent via message),
 *   emit     a logical decoding message through the SQL function outbox_tail.emit(),
 *   none     no event at all (the orders row alone: the baseline the event's cost is measured against).
 * The caller measures the WAL (pg_current_wal_lsn before and after) and what
 * the tables hold afterwards.
 */
import pg from 'pg';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { processCpuSeconds } from '../support/proc-stats.js';

export const WRITE_SIDE_VARIANTS = ['none', 'table', 'message', 'emit'] as const;
export type WriteSideVariant = (typeof WRITE_SIDE_VARIANTS)[number];

export const WRITE_SIDE_ORDERS_TABLE = 'bench_ws_orders';

export async function prepareWriteSide(client: pg.ClientBase): Promise<void> {
  await client.query(`create table if not exists ${WRITE_SIDE_ORDERS_TABLE} (
    id bigint primary key,
    customer text not null,
    amount_cents integer not null,
    status text not null default 'created',
    created_at timestamptz not null default now())`);
}

/** The order event's payload: the bench's PAYLOAD_SQL shape (~300 bytes of JSON). */
function payloadOf(id: number): string {
  return JSON.stringify({
    orderId: id,
    customer: `customer-${id % 97}`,
    amountCents: 100 + ((id * 7919) % 90_000),
    lines: [{ sku: `sku-${id % 13}`, qty: 1 + (id % 3) }],
    note: 'x'.repeat(182),
  });
}

export interface WriteSideRun {
  transactions: number;
  seconds: number;
  errors: number;
  /**
   * CPU seconds (user + system, /proc) of the writers' PostgreSQL backends
   * over the run, and of this process (the clients: pg, writeOutboxEvent):
   * what the writes cost, whatever else the machine runs. Null for the
   * backends when the server is not on this machine.
   */
  backendCpuSeconds: number | null;
  clientCpuSeconds: number;
}

/** `concurrency` clients write orders `firstId`, `firstId + 1`, ... for `seconds`, each order one transaction (synchronous_commit as the server has it). */
export async function runWriteSide(options: {
  url: string;
  variant: WriteSideVariant;
  aggregateType: string;
  seconds: number;
  concurrency: number;
  firstId: number;
}): Promise<WriteSideRun> {
  const { variant, aggregateType } = options;
  let nextId = options.firstId;
  let transactions = 0;
  let errors = 0;
  const clients = await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      const c = new pg.Client({ connectionString: options.url });
      await c.connect();
      return c;
    }),
  );
  const pids = await Promise.all(clients.map(async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid));
  const backendCpu = () => {
    const each = pids.map((pid) => processCpuSeconds(pid));
    return each.every((x) => x !== null) ? each.reduce((a, x) => a + x!, 0) : null;
  };
  const backend0 = backendCpu();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + options.seconds * 1000;
  try {
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < until) {
          const id = nextId++;
          try {
            await c.query('begin');
            await c.query(`insert into ${WRITE_SIDE_ORDERS_TABLE}(id, customer, amount_cents) values ($1, $2, $3)`, [
              id,
              `customer-${id % 97}`,
              100 + ((id * 7919) % 90_000),
            ]);
            const event = { aggregateType, aggregateId: String(id % 10_000), eventType: 'OrderCreated', payload: payloadOf(id) };
            if (variant === 'table' || variant === 'message') await writeOutboxEvent(c, event, { via: variant });
            else if (variant === 'emit')
              await c.query(`select outbox_tail.emit($1, $2, $3, $4::jsonb)`, [event.aggregateType, event.aggregateId, event.eventType, event.payload]);
            await c.query('commit');
            transactions++;
          } catch (error) {
            errors++;
            await c.query('rollback').catch(() => undefined);
            if (errors > 100) throw error;
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const backend1 = backendCpu();
    const client = process.cpuUsage(client0);
    return {
      transactions,
      seconds,
      errors,
      backendCpuSeconds: backend0 === null || backend1 === null ? null : backend1 - backend0,
      clientCpuSeconds: (client.user + client.system) / 1e6,
    };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}
