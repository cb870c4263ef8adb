/**
 * Issue 42: a publication name is an identifier. init creates it quoted
 * (`create publication "Outbox_Mixed"`), so run must ask pgoutput for that
 * same name: publication_names is a list PostgreSQL splits on commas and
 * lowercases unless each name is double-quoted inside the option value.
 */
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { runCli } from '../support/run-cli.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { query } from '../support/slot.js';

const bed = relayTestbed();

describe('publication names with capitals or commas', () => {
  it.each([['Outbox_Mixed'], ['Outbox,Mixed']])('streams from the publication %s that init created, by the same name', async (base) => {
    const slot = uniqueName('pub_name');
    const publication = `${base}_${slot.slice(-8)}`;
    const init = await runCli(['init', '--slot', slot, '--publication', publication], { OUTBOX_TAIL_DATABASE_URL: bed.db.url });
    expect(init.code, init.stderr).toBe(0);
    expect(await query(bed.db.url, 'select 1 from pg_publication where pubname = $1', [publication])).toHaveLength(1);
    const type = uniqueName('mixed');
    const collector = await bed.collect([`outbox.event.${type}`]);
    const relay = bed.relay(slot, { env: { OUTBOX_TAIL_PUBLICATION: publication } });
    await relay.waitForLog((l) => l.event === 'streaming');
    await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'a-1', 'E', '{"n": 1}')`, [type]);
    await collector.waitUntil((c) => c.records.length >= 1, 30_000, `the row through publication ${publication}`);
    expect(collector.records.map((r) => r.value?.toString())).toEqual(['{"n": 1}']);
    expect(relay.logs.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
  });
});
