import { describe, expect, it } from 'vitest';
import { uniqueName, withClient } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, query } from '../support/slot.js';

const bed = relayTestbed();

describe('created_at header (real Postgres and Kafka)', () => {
  it('is RFC 3339 UTC with microseconds even when the database defaults to another DateStyle and time zone', async () => {
    // A walsender takes the database's settings: pgoutput would send `01/12/2026 17:57:21.696420 IST` here.
    await withClient(bed.stack.databaseUrl, async (c) => {
      await c.query(`ALTER DATABASE ${bed.db.name} SET DateStyle = 'SQL, DMY'`);
      await c.query(`ALTER DATABASE ${bed.db.name} SET TimeZone = 'Asia/Kolkata'`);
    });
    const type = uniqueName('stamp');
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    await bed.relay(slot).waitForLog(isStreaming);
    for (let i = 0; i < 5; i++) {
      await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'Stamped', '{}')`, [type, `a-${i}`]);
    }
    await collector.waitForDistinct(5);
    const rows = await query<{ id: string; utc: string }>(
      bed.db.url,
      `select id::text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as utc from outbox where aggregate_type = $1`,
      [type],
    );
    expect(rows).toHaveLength(5);
    const byId = new Map(collector.records.map((r) => [r.headers.id!, r.headers.created_at]));
    for (const row of rows) expect(byId.get(row.id)).toBe(row.utc);
  });

  it('--record-headers id,created_at: records carry those two and the headers column entries, nothing else', async () => {
    const type = uniqueName('fewer');
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    await bed.relay(slot, { env: { OUTBOX_TAIL_RECORD_HEADERS: 'id,created_at' } }).waitForLog(isStreaming);
    await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers) values ($1, 'a', 'E', '{}', '{"trace": "t-1"}')`, [
      type,
    ]);
    await collector.waitForDistinct(1);
    const [row] = await query<{ id: string }>(bed.db.url, `select id::text from outbox where aggregate_type = $1`, [type]);
    const headers = collector.records[0]!.headers;
    expect(Object.keys(headers).sort()).toEqual(['created_at', 'id', 'trace']);
    expect(headers.id).toBe(row!.id);
  });
});
