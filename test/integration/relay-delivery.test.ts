import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';

const bed = relayTestbed();

async function relayWithCollector(topics: string[], env: Record<string, string> = {}) {
  const slot = uniqueName('slot');
  await createSlot(bed.db.url, slot);
  const collector = await bed.collect(topics);
  const relay = bed.relay(slot, { env });
  await relay.waitForLog(isStreaming);
  return { slot, collector, relay };
}

async function transaction(url: string, fn: (c: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    await fn(client);
    await client.query('commit');
  } finally {
    await client.end();
  }
}

interface Row {
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  payload: string;
  created_at: string;
}
const selectRows = (where: string, params: unknown[]) =>
  query<Row>(
    bed.db.url,
    `select id::text, aggregate_type, aggregate_id, event_type, payload::text as payload,
            to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at from outbox where ${where} order by created_at, id`,
    params,
  );

describe('relay delivery (real Postgres and Kafka)', () => {
  it('delivers 1,000 rows from 100 transactions once each, with topic, key, headers and byte-identical payload', async () => {
    const type = uniqueName('order');
    const topic = `outbox.event.${type}`;
    const { slot, collector } = await relayWithCollector([topic]);
    const commitLsns: string[] = [];
    for (let t = 0; t < 100; t++) {
      await transaction(bed.db.url, async (c) => {
        for (let i = 0; i < 10; i++) {
          await c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers) values ($1, $2, $3, $4, $5)`, [
            type,
            `order-${t % 7}`,
            i % 2 ? 'OrderCreated' : 'OrderPaid',
            JSON.stringify({ t, i, amount: t * 10 + i, tags: ['a', 'b'] }),
            JSON.stringify({ traceparent: `00-${t}-${i}`, attempt: 1 }),
          ]);
        }
      });
    }
    const end = await currentWalLsn(bed.db.url);
    await collector.waitForDistinct(1000);
    const rows = await selectRows('aggregate_type = $1', [type]);
    expect(rows).toHaveLength(1000);
    // no fault happened: exactly one record per row (I4)
    expect(collector.records).toHaveLength(1000);
    const byId = new Map(collector.records.map((r) => [r.headers.id!, r]));
    for (const row of rows) {
      const record = byId.get(row.id)!;
      expect(record.topic).toBe(topic);
      expect(record.key).toBe(row.aggregate_id);
      expect(record.value!.equals(Buffer.from(row.payload, 'utf8'))).toBe(true);
      expect(record.headers).toMatchObject({
        id: row.id,
        event_type: row.event_type,
        aggregate_type: type,
        aggregate_id: row.aggregate_id,
        created_at: row.created_at,
        traceparent: expect.stringMatching(/^00-\d+-\d$/),
      });
      expect(record.headers.attempt).toBeUndefined(); // non-string header entries are not forwarded
      commitLsns.push(record.headers.commit_lsn!);
    }
    // ten rows share each transaction's commit LSN
    expect(new Set(commitLsns).size).toBe(100);
    // per key, Kafka order equals commit order
    const perKey = new Map<string, bigint[]>();
    for (const r of collector.records) perKey.set(r.key!, [...(perKey.get(r.key!) ?? []), Lsn.parse(r.headers.commit_lsn!)]);
    for (const lsns of perKey.values()) expect([...lsns].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(lsns);
    await waitForConfirmed(bed.db.url, slot, end);
  });

  it('never publishes rows of a rolled-back transaction or of a rolled-back savepoint', async () => {
    const type = uniqueName('rb');
    const topic = `outbox.event.${type}`;
    const { collector } = await relayWithCollector([topic]);
    const client = new pg.Client({ connectionString: bed.db.url });
    await client.connect();
    const insert = (aggregateId: string) =>
      client.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', '{}')`, [type, aggregateId]);
    await client.query('begin');
    for (let i = 0; i < 50; i++) await insert('rolled-back');
    await client.query('rollback');
    await client.query('begin');
    await insert('kept-1');
    await client.query('savepoint s');
    await insert('rolled-back-savepoint');
    await client.query('rollback to savepoint s');
    await insert('kept-2');
    await client.query('commit');
    await client.query('begin');
    await insert('marker');
    await client.query('commit');
    await client.end();
    await collector.waitUntil((c) => c.records.some((r) => r.key === 'marker'));
    expect(collector.records.map((r) => r.key)).toEqual(['kept-1', 'kept-2', 'marker']);
  });

  it('relays unicode and a 1 MB payload byte for byte', async () => {
    const type = uniqueName('big');
    const topic = `outbox.event.${type}`;
    const { collector } = await relayWithCollector([topic]);
    const unicode = { text: 'Grüße, 日本語, emoji 🧾✅, RTL שלום, zero-width \u200d, escaped "quote" \\ slash', n: 1.5e-7 };
    const big = { blob: 'x'.repeat(1_000_000 - 20) };
    await transaction(bed.db.url, async (c) => {
      await c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'u', 'Unicode', $2)`, [type, JSON.stringify(unicode)]);
      await c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'b', 'Big', $2)`, [type, JSON.stringify(big)]);
    });
    await collector.waitForDistinct(2);
    const rows = await selectRows('aggregate_type = $1', [type]);
    for (const row of rows) {
      const record = collector.records.find((r) => r.headers.id === row.id)!;
      expect(record.value!.equals(Buffer.from(row.payload, 'utf8'))).toBe(true);
    }
    expect(JSON.parse(collector.records.find((r) => r.key === 'u')!.value!.toString('utf8'))).toEqual(unicode);
    expect(collector.records.find((r) => r.key === 'b')!.value!.length).toBeGreaterThan(999_000);
  });

  it('keeps relaying, with the new column layout, after ALTER TABLE outbox ADD COLUMN mid-stream', async () => {
    const type = uniqueName('alter');
    const topic = `outbox.event.${type}`;
    const { collector } = await relayWithCollector([topic]);
    const insert = (id: string) =>
      query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', '{"v": 1}')`, [type, id]);
    await insert('before');
    await collector.waitForDistinct(1);
    await query(bed.db.url, `alter table outbox add column if not exists tenant text default 'acme'`);
    await insert('after');
    await query(bed.db.url, `alter table outbox alter column event_type type varchar(200)`);
    await insert('after-type-change');
    await collector.waitForDistinct(3);
    expect(collector.records.map((r) => r.key)).toEqual(['before', 'after', 'after-type-change']);
  });

  it('relays a Debezium-style outbox table through the column mapping options', async () => {
    const table = uniqueName('dbz_outbox');
    const publication = uniqueName('dbz_pub');
    await query(
      bed.db.url,
      `create table ${table} (id uuid primary key default gen_random_uuid(), aggregatetype varchar(255) not null, aggregateid varchar(255) not null, type varchar(255) not null, payload jsonb)`,
    );
    await query(bed.db.url, `create publication ${publication} for table ${table} with (publish = 'insert')`);
    const type = uniqueName('Customer');
    const topic = `outbox.event.${type}`;
    const { collector } = await relayWithCollector([topic], {
      OUTBOX_TAIL_TABLE: table,
      OUTBOX_TAIL_PUBLICATION: publication,
      OUTBOX_TAIL_COLUMN_AGGREGATE_TYPE: 'aggregatetype',
      OUTBOX_TAIL_COLUMN_AGGREGATE_ID: 'aggregateid',
      OUTBOX_TAIL_COLUMN_EVENT_TYPE: 'type',
    });
    await query(bed.db.url, `insert into ${table}(aggregatetype, aggregateid, type, payload) values ($1, 'c-1', 'CustomerCreated', '{"name": "Ann"}')`, [type]);
    await collector.waitForDistinct(1);
    const [record] = collector.records;
    expect(record).toMatchObject({ topic, key: 'c-1', headers: { aggregate_type: type, aggregate_id: 'c-1', event_type: 'CustomerCreated' } });
    expect(record!.headers.created_at).toBeUndefined(); // the table has no created_at column
    expect(record!.value!.toString()).toBe('{"name": "Ann"}');
  });
});
