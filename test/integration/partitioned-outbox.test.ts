import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';

const bed = relayTestbed();

describe('range-partitioned outbox (real Postgres and Kafka)', () => {
  it('relays every partition under the root name with publish_via_partition_root, and dropping an old partition streams nothing', async () => {
    const table = uniqueName('outbox_part');
    const publication = uniqueName('part_pub');
    await query(
      bed.db.url,
      `create table ${table} (id uuid not null default gen_random_uuid(), aggregate_type text not null, aggregate_id text not null,
         event_type text not null, payload jsonb not null, headers jsonb, created_at timestamptz not null default now(),
         primary key (id, created_at)) partition by range (created_at)`,
    );
    await query(bed.db.url, `create table ${table}_old partition of ${table} for values from ('2001-01-01') to ('2002-01-01')`);
    await query(bed.db.url, `create table ${table}_now partition of ${table} for values from ('2002-01-01') to (maxvalue)`);
    await query(bed.db.url, `create publication ${publication} for table ${table} with (publish = 'insert', publish_via_partition_root = true)`);
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const type = uniqueName('part');
    const collector = await bed.collect([`outbox.event.${type}`]);
    const relay = bed.relay(slot, { env: { OUTBOX_TAIL_TABLE: table, OUTBOX_TAIL_PUBLICATION: publication } });
    await relay.waitForLog(isStreaming);
    await query(
      bed.db.url,
      `insert into ${table}(aggregate_type, aggregate_id, event_type, payload, created_at) values
         ($1, 'a', 'Old', '{"n": 1}', '2001-06-01'), ($1, 'a', 'New', '{"n": 2}', now()), ($1, 'b', 'New', '{"n": 3}', now())`,
      [type],
    );
    await collector.waitForDistinct(3);
    expect(collector.records.map((r) => [r.key, r.headers.event_type, r.value!.toString()])).toEqual([
      ['a', 'Old', '{"n": 1}'],
      ['a', 'New', '{"n": 2}'],
      ['b', 'New', '{"n": 3}'],
    ]);
    // Retention by partition: no DELETE, nothing streamed, the relay keeps going.
    await query(bed.db.url, `drop table ${table}_old`);
    await query(bed.db.url, `insert into ${table}(aggregate_type, aggregate_id, event_type, payload) values ($1, 'c', 'New', '{"n": 4}')`, [type]);
    await collector.waitForDistinct(4);
    await waitForConfirmed(bed.db.url, slot, await currentWalLsn(bed.db.url));
    expect(collector.records).toHaveLength(4);
    expect(relay.child.exitCode).toBeNull();
  });
});
