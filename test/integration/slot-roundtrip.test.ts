/**
 * Outbox rows go through a real logical replication slot and come back via
 * pg-logical-replication's LogicalReplicationService + PgoutputPlugin.
 */
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { getStack } from '../support/stack.js';

let db: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(getStack());
  client = new pg.Client(db.url);
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function createSlot(): Promise<string> {
  const slot = uniqueName('slot');
  await client.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
  return slot;
}

/**
 * Streams the slot from its start until `done(messages)` holds, then stops.
 * Never acknowledges anything (auto: false, timeoutSeconds: 0): the library's
 * timer would otherwise confirm the last received LSN every 10 s.
 */
async function readSlot(slot: string, done: (messages: Pgoutput.Message[]) => boolean, timeoutMs = 30_000): Promise<Pgoutput.Message[]> {
  const service = new LogicalReplicationService({ connectionString: db.url }, { acknowledge: { auto: false, timeoutSeconds: 0 } });
  const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: ['outbox_tail'] });
  const messages: Pgoutput.Message[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`slot ${slot}: condition not met within ${timeoutMs} ms; got ${messages.map((m) => m.tag).join(',')}`)),
        timeoutMs,
      );
      service.on('data', (_lsn: string, message: Pgoutput.Message) => {
        messages.push(message);
        if (done(messages)) {
          clearTimeout(timer);
          resolve();
        }
      });
      service.on('error', (err: Error) => {
        clearTimeout(timer);
        reject(err);
      });
      service.subscribe(plugin, slot).catch((err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  } finally {
    await service.destroy();
  }
  return messages;
}

const inserts = (messages: Pgoutput.Message[]) => messages.filter((m): m is Pgoutput.MessageInsert => m.tag === 'insert');

describe('logical replication slot round trip (pgoutput, publication outbox_tail)', () => {
  it('returns the rows of one committed transaction in order, with their column values, between one Begin and one Commit', async () => {
    const slot = await createSlot();
    const rows = [
      {
        aggregate_type: 'order',
        aggregate_id: 'o-1',
        event_type: 'OrderPlaced',
        payload: { total: 12.5, items: [1, 2], note: 'ünïcødé ✓' },
        headers: { traceparent: '00-abc-01' },
      },
      { aggregate_type: 'order', aggregate_id: 'o-1', event_type: 'OrderPaid', payload: { paid: true }, headers: null },
      { aggregate_type: 'customer', aggregate_id: 'c-9', event_type: 'CustomerRenamed', payload: { name: "O'Brien" }, headers: { a: 'b' } },
    ];
    await client.query('BEGIN');
    const inserted: { id: string; created_at: Date }[] = [];
    for (const r of rows) {
      const res = await client.query<{ id: string; created_at: Date }>(
        `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
         VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`,
        [r.aggregate_type, r.aggregate_id, r.event_type, JSON.stringify(r.payload), r.headers === null ? null : JSON.stringify(r.headers)],
      );
      inserted.push(res.rows[0]!);
    }
    await client.query('COMMIT');

    const messages = await readSlot(slot, (m) => inserts(m).length >= rows.length && m.at(-1)?.tag === 'commit');

    const tags = messages.filter((m) => m.tag !== 'relation' && m.tag !== 'type').map((m) => m.tag);
    expect(tags).toEqual(['begin', 'insert', 'insert', 'insert', 'commit']);
    const got = inserts(messages);
    for (const [i, msg] of got.entries()) {
      expect(msg.relation.schema).toBe('public');
      expect(msg.relation.name).toBe('outbox');
      expect(msg.new.id).toBe(inserted[i]!.id);
      expect(msg.new.aggregate_type).toBe(rows[i]!.aggregate_type);
      expect(msg.new.aggregate_id).toBe(rows[i]!.aggregate_id);
      expect(msg.new.event_type).toBe(rows[i]!.event_type);
      expect(msg.new.payload).toEqual(rows[i]!.payload);
      expect(msg.new.headers).toEqual(rows[i]!.headers);
      expect(new Date(msg.new.created_at).getTime()).toBe(inserted[i]!.created_at.getTime());
    }
  });

  it('yields nothing for a rolled-back transaction: only the committed marker written after it arrives', async () => {
    const slot = await createSlot();
    await client.query('BEGIN');
    for (let i = 0; i < 3; i++) {
      await client.query("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) VALUES ('phantom', $1, 'RolledBack', '{}')", [`p-${i}`]);
    }
    await client.query('ROLLBACK');
    const marker = await client.query<{ id: string }>(
      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) VALUES ('marker', 'm-1', 'Marker', '{\"marker\":true}') RETURNING id",
    );
    const markerId = marker.rows[0]!.id;

    // The slot streams in commit order, so anything from the rolled-back
    // transaction would have to arrive before the marker's Commit.
    const messages = await readSlot(slot, (m) => inserts(m).some((x) => x.new.id === markerId) && m.at(-1)?.tag === 'commit');

    const got = inserts(messages);
    expect(got.map((m) => m.new.id)).toEqual([markerId]);
    expect(got.filter((m) => m.new.aggregate_type === 'phantom')).toEqual([]);
    expect(messages.filter((m) => m.tag === 'begin')).toHaveLength(1);
  });
});
