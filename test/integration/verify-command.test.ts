import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../src/commands/verify/verify-outbox.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor } from '../support/kafka.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { createSlot, query } from '../support/slot.js';

const bed = relayTestbed();

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { OUTBOX_TAIL_DATABASE_URL: bed.db.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });
}

async function insert(type: string, count: number): Promise<string[]> {
  const rows = await query<{ id: string }>(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload)
     select $1, 'a-' || (g % 7), 'Checked', jsonb_build_object('n', g) from generate_series(1, $2::int) g returning id::text`,
    [type, count],
  );
  return rows.map((r) => r.id);
}

describe('outbox-tail verify (real Postgres and Kafka)', () => {
  it('reports the rows the relay never published and the ids in Kafka no row has, per topic, and exits 1', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const [typeA, typeB] = [uniqueName('va'), uniqueName('vb')];
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${typeA}`, `outbox.event.${typeB}`]);
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming);
    await insert(typeA, 300);
    await insert(typeB, 200);
    await collector.waitForDistinct(500);
    await relay.kill('SIGKILL');

    const clean = await cli(['verify', '--from', from, '--json']);
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    const ok = JSON.parse(clean.stdout) as VerifyReport;
    expect(ok.topics.map((t) => [t.topic, t.rows, t.records, t.distinctIds, t.missing, t.unknown])).toEqual([
      [`outbox.event.${typeA}`, 300, 300, 300, 0, 0],
      [`outbox.event.${typeB}`, 200, 200, 200, 0, 0],
    ]);

    // Rows committed while no relay runs, a record whose id no row has, and a duplicate of a published one.
    const unpublished = (await insert(typeA, 3)).sort();
    const stranger = randomUUID();
    const producer = kafkaFor(bed.stack).producer({ idempotent: true, maxInFlightRequests: 1 }); // a retried send must not add a third copy
    await producer.connect();
    const createdAt = new Date().toISOString().replace('Z', '000Z');
    const [published] = await query<{ id: string }>(bed.db.url, `select id::text from outbox where aggregate_type = $1 limit 1`, [typeB]);
    await producer.send({
      topic: `outbox.event.${typeB}`,
      messages: [
        { key: 'x', value: '{}', headers: { id: stranger, created_at: createdAt } },
        { key: 'x', value: '{}', headers: { id: published!.id, created_at: createdAt } },
      ],
    });
    await producer.disconnect();

    const dirty = await cli(['verify', '--from', from, '--json']);
    expect(dirty.code, dirty.stderr).toBe(1);
    const bad = JSON.parse(dirty.stdout) as VerifyReport;
    expect(bad.topics).toEqual([
      expect.objectContaining({ topic: `outbox.event.${typeA}`, rows: 303, records: 300, distinctIds: 300, missing: 3, unknown: 0, missingIds: unpublished }),
      expect.objectContaining({ topic: `outbox.event.${typeB}`, rows: 200, records: 202, distinctIds: 201, missing: 0, unknown: 1, unknownIds: [stranger] }),
    ]);
    expect(bad.missing).toBe(3);

    const text = await cli(['verify', '--from', from]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`missing ids (first 3): ${unpublished.join(' ')}`);
  });

  it('names a topic that does not exist and counts its rows as missing', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const type = uniqueName('vnotopic');
    await insert(type, 4);
    const result = await cli(['verify', '--from', from, '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as VerifyReport;
    expect(report.topics.find((t) => t.topic === `outbox.event.${type}`)).toMatchObject({ exists: false, rows: 4, records: 0, missing: 4 });
    expect((await cli(['verify', '--from', from])).stdout).toContain(`outbox.event.${type} (no such topic)`);
  });

  it('warns about a window with no rows and exits 0', async () => {
    const result = await cli(['verify', '--from', '2001-01-01T00:00:00Z', '--to', '2001-01-02T00:00:00Z']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('no outbox rows created in [2001-01-01T00:00:00.000Z, 2001-01-02T00:00:00.000Z)');
  });

  it('refuses a table without the created-at column, a window without a zone and an inverted window, naming the fix', async () => {
    const noColumn = await cli(['verify', '--from', '1h', '--column-created-at', 'made_at']);
    expect(noColumn.code).not.toBe(0);
    expect(noColumn.stderr).toContain('COLUMN_MISSING');
    expect(noColumn.stderr).toContain('has no column made_at');
    expect(noColumn.stderr).toContain('--column-created-at');
    const noZone = await cli(['verify', '--from', '2026-12-01 12:00:00']);
    expect(noZone.code).toBe(2);
    expect(noZone.stderr).toContain('expected a time with a zone');
    const inverted = await cli(['verify', '--from', '1h', '--to', '2h']);
    expect(inverted.code).toBe(2);
    expect(inverted.stderr).toContain('is not before --to');
  });
});
