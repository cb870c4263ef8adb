import { describe, expect, it } from 'vitest';
import type { ReplayReport } from '../../src/commands/replay/replay-outbox.js';
import type { VerifyReport } from '../../src/commands/verify/verify-outbox.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { createSlot, query } from '../support/slot.js';

const bed = relayTestbed();

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { OUTBOX_TAIL_DATABASE_URL: bed.db.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });
}

/** One transaction per call, `count` rows over 5 keys: per key, later calls commit later. */
async function insert(type: string, count: number, step: number): Promise<string[]> {
  const rows = await query<{ id: string }>(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers)
     select $1, 'k-' || (g % 5), 'Step', jsonb_build_object('step', $3::int, 'n', g), '{"trace":"t-1"}' from generate_series(1, $2::int) g returning id::text`,
    [type, count, step],
  );
  return rows.map((r) => r.id);
}

describe('outbox-tail replay (real Postgres and Kafka)', () => {
  it('--only-missing publishes exactly the rows Kafka lacks, in the relay record format, after which verify finds none missing', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const type = uniqueName('rp');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming);
    for (let step = 0; step < 4; step++) await insert(type, 50, step);
    await collector.waitForDistinct(200);
    await relay.kill('SIGKILL');
    const unpublished = new Set(await insert(type, 5, 4));

    const dry = await cli(['replay', '--from', from, '--only-missing', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout) as ReplayReport).toMatchObject({ selected: 5, published: 0, dryRun: true, malformed: [] });

    const replay = await cli(['replay', '--from', from, '--only-missing', '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout) as ReplayReport).toMatchObject({ selected: 5, published: 5, topics: { [topic]: 5 } });
    await collector.waitForDistinct(205);
    const replayed = collector.records.filter((r) => unpublished.has(r.headers.id!));
    expect(replayed).toHaveLength(5);
    const [row] = await query<{ payload: string; aggregate_id: string; utc: string }>(
      bed.db.url,
      `select payload::text as payload, aggregate_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as utc from outbox where id = $1`,
      [replayed[0]!.headers.id],
    );
    expect(replayed[0]!.key).toBe(row!.aggregate_id);
    expect(replayed[0]!.value!.toString('utf8')).toBe(row!.payload);
    expect(replayed[0]!.headers).toMatchObject({
      event_type: 'Step',
      aggregate_type: type,
      aggregate_id: row!.aggregate_id,
      created_at: row!.utc,
      trace: 't-1',
    });
    // No replication transaction stands behind a replayed record: no commit_lsn, and a mark saying when it was replayed.
    expect(replayed[0]!.headers.commit_lsn).toBeUndefined();
    expect(replayed[0]!.headers.outbox_tail_replay).toMatch(/^\d{4}-\d\d-\d\dT/);

    const verify = await cli(['verify', '--from', from, '--json']);
    expect(verify.code, verify.stdout).toBe(0);
    expect((JSON.parse(verify.stdout) as VerifyReport).topics).toEqual([expect.objectContaining({ topic, rows: 205, missing: 0, distinctIds: 205 })]);
  });

  it('replays a whole window with each key in the order the relay published it', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const type = uniqueName('rpo');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming);
    for (let step = 0; step < 6; step++) await insert(type, 20, step);
    await collector.waitForDistinct(120);
    await relay.kill('SIGKILL');
    const original = collector.records.slice();

    const replay = await cli(['replay', '--from', from, '--batch-size', '7', '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout) as ReplayReport).toMatchObject({ selected: 120, published: 120, order: 'created_at' });
    await collector.waitUntil((c) => c.records.length >= 240);
    const byKey = (records: typeof original) => {
      const keys = new Map<string, string[]>();
      for (const r of records) keys.set(r.key!, [...(keys.get(r.key!) ?? []), r.headers.id!]);
      return keys;
    };
    const replayed = collector.records.filter((r) => r.headers.outbox_tail_replay !== undefined);
    expect(replayed).toHaveLength(120);
    expect(byKey(replayed)).toEqual(byKey(original));
  });

  it('refuses an LSN window naming the time to give instead, and warns about a window without rows', async () => {
    const lsn = await cli(['replay', '--from', '0/16B3748']);
    expect(lsn.code).toBe(2);
    expect(lsn.stderr).toContain('an outbox row carries no LSN');
    expect(lsn.stderr).toContain('created_at header');
    const empty = await cli(['replay', '--from', '2001-01-01T00:00:00Z', '--to', '2001-01-02T00:00:00Z']);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toContain('no rows to replay');
  });
});
