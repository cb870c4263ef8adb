/**
 * A fixed-rate writer for the steady scenarios: single-row transactions
 * (autocommit INSERTs) of the same ~300-byte payload as the backlog, spread
 * over a few connections, paced against the wall clock. Every row gets an id
 * chosen here, and two wall-clock times are kept (ms since the epoch,
 * sub-millisecond): when its INSERT (autocommit: INSERT + COMMIT in one
 * statement) was handed to the connection, and when the reply came back. The
 * commit happened between the two, so latency measured from the first is an
 * upper bound and from the second a lower bound (the reply can reach a busy
 * writer after Kafka already appended the record).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PAYLOAD_SQL } from './bench-db.js';

export interface WriterResult {
  /** Rows committed, warm-up included. */
  written: number;
  /** Rows committed after the warm-up: the ones in commitTimes. */
  measured: number;
  seconds: number;
  /** id -> when the INSERT was sent (ms since the epoch, fractional): at or before the commit. */
  commitTimes: Map<string, number>;
  /** id -> when the reply (the commit) came back: at or after the commit. */
  replyTimes: Map<string, number>;
  /**
   * The id of the row whose payload has this orderId (the row's number, from 1): for a relay whose
   * records carry no id header (Conduit), the way back from a record to its row.
   */
  idOfOrder(orderId: number): string | undefined;
}

export const nowMs = () => performance.timeOrigin + performance.now();

/** Writes `rate` rows/s for `warmupSeconds + seconds`; only rows issued after the warm-up are timed. */
export async function runWriter(options: {
  url: string;
  table: string;
  aggregateType: string;
  rate: number;
  seconds: number;
  warmupSeconds?: number;
  connections?: number;
}): Promise<WriterResult> {
  const connections = options.connections ?? 4;
  const clients: pg.Client[] = [];
  for (let i = 0; i < connections; i++) {
    const c = new pg.Client({ connectionString: options.url });
    await c.connect();
    await c.query('set synchronous_commit = on');
    clients.push(c);
  }
  const text = `insert into ${options.table} (id, aggregate_type, aggregate_id, event_type, payload)
    select $1::uuid, $2, (g % 10000)::text, 'OrderCreated', ${PAYLOAD_SQL} from (select $3::int as g) s`;
  const commitTimes = new Map<string, number>();
  const replyTimes = new Map<string, number>();
  // ids[n - 1] is the id of the n-th row, whose payload's orderId is n.
  const ids: string[] = [];
  const pending = new Array<number>(connections).fill(0);
  const chains: Promise<unknown>[] = clients.map(() => Promise.resolve());
  const inflight = new Set<Promise<void>>();
  const warmup = Math.round(options.rate * (options.warmupSeconds ?? 0));
  const total = warmup + Math.round(options.rate * options.seconds);
  let committed = 0;
  let issued = 0;
  let failure: unknown = null;
  const t0 = nowMs();
  const issue = () => {
    let pick = 0;
    for (let i = 1; i < connections; i++) if (pending[i]! < pending[pick]!) pick = i;
    const id = randomUUID();
    const n = ++issued;
    ids.push(id);
    const timed = n > warmup;
    pending[pick]!++;
    // One statement at a time per connection (pg 9 drops its implicit queue): chain them.
    const client = clients[pick]!;
    const p = chains[pick]!.then(() => {
      if (timed) commitTimes.set(id, nowMs());
      return client.query({ name: 'bench_insert', text, values: [id, options.aggregateType, n] });
    })
      .then(
        () => {
          committed++;
          if (timed) replyTimes.set(id, nowMs());
        },
        (error: unknown) => {
          failure ??= error;
        },
      )
      .finally(() => {
        pending[pick]!--;
        inflight.delete(p);
      });
    chains[pick] = p;
    inflight.add(p);
  };
  while (issued < total && !failure) {
    const elapsed = nowMs() - t0;
    const due = Math.min(total, Math.floor((elapsed * options.rate) / 1000));
    while (issued < due) issue();
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  const seconds = (nowMs() - t0) / 1000;
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  if (failure) throw failure;
  return { written: committed, measured: replyTimes.size, seconds, commitTimes, replyTimes, idOfOrder: (orderId) => ids[orderId - 1] };
}
