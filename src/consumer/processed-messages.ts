import pg from 'pg';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { quoteTableName } from './sql.js';

export const DEFAULT_PROCESSED_TABLE = 'processed_messages';

/**
 * One statement for a whole batch: inserts every id, skips the ones the group
 * already applied (and repeats within the batch), returns the new ones.
 */
export function insertProcessedSql(table: string): string {
  return `insert into ${quoteTableName(table)} (consumer_group, message_id)
    select $1::text, unnest($2::text[])
    on conflict do nothing
    returning message_id`;
}

/** Anything that can run a query: a pg.Pool, pg.Client or pg.PoolClient. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface PruneOptions {
  /** Age: milliseconds, or a PostgreSQL interval ('7 days'). Rows with processed_at older than now() minus this go. */
  olderThan: number | string;
  /** Only this group's rows; default: every group. */
  consumerGroup?: string;
  /** Default `processed_messages`. */
  table?: string;
  /** Delete in chunks of this many rows (short transactions on a big table); default: one statement. */
  batchSize?: number;
}

/**
 * Deletes processed ids by age and returns how many went.
 *
 * Only prune ids older than any replay can be: a duplicate that arrives after
 * its id was pruned is applied again. Replays come from relay restarts (the
 * slot's unconfirmed tail) and consumer rewinds, so keep at least the Kafka
 * topic's retention when consumers may ever be rewound.
 */
export async function pruneProcessedMessages(db: Queryable | string, options: PruneOptions): Promise<number> {
  const { olderThan, consumerGroup, batchSize } = options;
  let interval: string;
  if (typeof olderThan === 'number') {
    if (!Number.isFinite(olderThan) || olderThan < 0) {
      throw new OutboxTailError('CONFIG_INVALID', `olderThan must be a non-negative number of milliseconds, got ${olderThan}`);
    }
    interval = `${olderThan} milliseconds`;
  } else if (typeof olderThan === 'string' && olderThan.trim() !== '') {
    interval = olderThan;
  } else {
    throw new OutboxTailError('CONFIG_INVALID', 'olderThan must be milliseconds or a PostgreSQL interval such as "7 days"');
  }
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1)) {
    throw new OutboxTailError('CONFIG_INVALID', `batchSize must be a positive integer, got ${batchSize}`);
  }
  const table = quoteTableName(options.table ?? DEFAULT_PROCESSED_TABLE);

  let client: pg.Client | null = null;
  let q: Queryable;
  if (typeof db === 'string') {
    client = new pg.Client({ connectionString: db, application_name: 'outbox-tail-prune' });
    await client.connect();
    q = client;
  } else {
    q = db;
  }
  try {
    const cutoffRow = await q.query<{ cutoff: Date }>('select now() - $1::interval as cutoff', [interval]);
    const cutoff = cutoffRow.rows[0]!.cutoff;
    const params: unknown[] = [cutoff];
    let where = 'processed_at < $1';
    if (consumerGroup !== undefined) {
      params.push(consumerGroup);
      where += ` and consumer_group = $${params.length}`;
    }
    if (batchSize === undefined) {
      return (await q.query(`delete from ${table} where ${where}`, params)).rowCount ?? 0;
    }
    params.push(batchSize);
    const sql = `delete from ${table} where ctid = any(array(select ctid from ${table} where ${where} limit $${params.length}))`;
    let total = 0;
    for (;;) {
      const n = (await q.query(sql, params)).rowCount ?? 0;
      total += n;
      if (n < batchSize) return total;
    }
  } catch (error) {
    if (OutboxTailError.is(error)) throw error;
    throw new OutboxTailError('PG_ERROR', `pruning ${table}: ${(error as Error).message}`, { cause: error });
  } finally {
    await client?.end().catch(() => undefined);
  }
}
