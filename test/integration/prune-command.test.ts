import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { PruneReport } from '../../src/commands/prune/prune-outbox.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { createSlot, query } from '../support/slot.js';

const bed = relayTestbed();

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { OUTBOX_TAIL_DATABASE_URL: bed.db.url, OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(',') });
}

/** Rows that look two hours old (created_at set by hand), in one transaction. */
async function insertOld(type: string, count: number): Promise<void> {
  await query(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload, created_at)
     select $1, 'k-' || g, 'Old', '{}', now() - interval '2 hours' from generate_series(1, $2::int) g`,
    [type, count],
  );
}

const remaining = async (type: string) =>
  Number((await query<{ n: string }>(bed.db.url, `select count(*) as n from outbox where aggregate_type = $1`, [type]))[0]!.n);

describe('outbox-tail prune (real Postgres and Kafka)', () => {
  it('deletes old rows the slot has passed and keeps old rows committed while no relay confirmed them', async () => {
    const [published, unpublished, recent] = [uniqueName('pp'), uniqueName('pu'), uniqueName('pr')];
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${published}`]);
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming);
    await insertOld(published, 300);
    await collector.waitForDistinct(300);
    // catalog_xmin moves with restart_lsn, at a running-xacts record the relay confirmed past: a checkpoint writes one.
    const deadline = Date.now() + 60_000;
    for (;;) {
      await query(bed.db.url, 'checkpoint');
      await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'tick', 'Tick', '{}')`, [recent]);
      const [row] = await query<{ passed: boolean }>(
        bed.db.url,
        `select bool_and(age(o.xmin) > (select age(catalog_xmin) from pg_replication_slots where slot_name = $2)) as passed from outbox o where aggregate_type = $1`,
        [published, slot],
      );
      if (row!.passed) break;
      if (Date.now() > deadline) throw new Error('the slot did not pass the published rows within 60 s');
      await sleep(1_000);
    }
    await relay.kill('SIGKILL');
    await insertOld(unpublished, 40);

    const dry = await cli(['prune', '--slot', slot, '--older-than', '1h', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout) as PruneReport).toMatchObject({ dryRun: true, deleted: 300, heldBack: 40 });
    expect(await remaining(published)).toBe(300);

    const prune = await cli(['prune', '--slot', slot, '--older-than', '1h', '--batch-size', '64', '--json']);
    expect(prune.code, prune.stderr).toBe(0);
    expect(JSON.parse(prune.stdout) as PruneReport).toMatchObject({ deleted: 300, batches: 5, heldBack: 40 });
    expect(await remaining(published)).toBe(0);
    expect(await remaining(unpublished)).toBe(40);
    expect(await remaining(recent)).toBeGreaterThan(0);

    const text = await cli(['prune', '--slot', slot, '--older-than', '1h']);
    expect(text.stdout).toContain(`kept 40 older row(s): slot ${slot} may not have passed their transactions yet`);

    // status shows what a retention window is chosen by: the table's size and its oldest row (one of the 40 kept).
    const status = await cli(['status', '--slot', slot, '--json']);
    const [oldest] = await query<{ t: string }>(bed.db.url, `select min(created_at)::text as t from outbox`);
    expect(JSON.parse(status.stdout).outbox).toMatchObject({ table: 'public.outbox', totalBytes: expect.any(Number), oldestCreatedAt: oldest!.t });
  });

  it('refuses a missing slot and a retention that is not a duration, naming the fix', async () => {
    const noSlot = await cli(['prune', '--slot', 'no_such_slot', '--older-than', '7d']);
    expect(noSlot.code).toBe(3);
    expect(noSlot.stderr).toContain('SLOT_MISSING');
    expect(noSlot.stderr).toContain('--slot');
    const bad = await cli(['prune', '--slot', 'x', '--older-than', 'a week']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a duration');
  });
});
