import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RecoverReport } from '../../src/commands/recover/recover-slot.js';
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

async function insert(type: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await query(bed.db.url, `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'Recovered', '{}')`, [type, `k-${i % 4}`]);
  }
}

describe('outbox-tail recover (real Postgres and Kafka)', () => {
  it('after the slot was dropped, creates it anew and backfills from the recorded position: nothing lost, duplicates counted', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const type = uniqueName('rc');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const relay = bed.relay(slot);
    await relay.waitForLog(isStreaming);
    await insert(type, 60);
    await collector.waitForDistinct(60);
    // The relay records its frontier every 5 s; wait until it covers the published rows.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await query<{ covered: boolean }>(
        bed.db.url,
        `select p.frontier_commit_time >= (select max(created_at) from outbox where aggregate_type = $2) as covered from outbox_tail_relay_position p where p.slot = $1`,
        [slot, type],
      );
      if (row?.covered) break;
      if (Date.now() > deadline) throw new Error('the relay did not record its position within 30 s');
      await sleep(500);
    }
    await relay.kill('SIGKILL');
    await insert(type, 25); // committed while the relay was down: still in the lost slot's WAL
    await query(bed.db.url, 'select pg_drop_replication_slot($1)', [slot]);
    await insert(type, 15); // committed with no slot at all: only the table has them

    const dry = await cli(['recover', '--slot', slot, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as RecoverReport).slotLsn).toBeNull();
    expect((await query(bed.db.url, 'select 1 from pg_replication_slots where slot_name = $1', [slot])).length).toBe(0);

    const recover = await cli(['recover', '--slot', slot, '--json']);
    expect(recover.code, recover.stderr).toBe(0);
    const report = JSON.parse(recover.stdout) as RecoverReport;
    expect(report).toMatchObject({ slot, found: 'missing', slotLsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/) });
    expect(report.position).not.toBeNull();
    expect(report.replay.published).toBeGreaterThanOrEqual(40);

    // The relay resumes on the new slot; rows written from now on stream as usual.
    const again = bed.relay(slot);
    await again.waitForLog(isStreaming);
    await insert(type, 10);
    await collector.waitForDistinct(110);
    const verify = await cli(['verify', '--from', from, '--json']);
    expect(verify.code, verify.stdout).toBe(0);
    const v = JSON.parse(verify.stdout) as VerifyReport;
    expect(v.topics).toEqual([expect.objectContaining({ topic, rows: 110, distinctIds: 110, missing: 0, unknown: 0 })]);
    console.log(`[recover] rows 110, records ${v.records}, duplicates ${v.records - 110}, backfill published ${report.replay.published}`);
  });

  it('refuses a healthy slot, and a lost slot without a recorded position unless --since is given', async () => {
    const healthy = uniqueName('slot');
    await createSlot(bed.db.url, healthy);
    const refused = await cli(['recover', '--slot', healthy]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('SLOT_NOT_LOST');
    expect(refused.stderr).toContain('start the relay');
    const unknown = await cli(['recover', '--slot', uniqueName('gone')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('POSITION_UNKNOWN');
    expect(unknown.stderr).toContain('--since');
    const since = await cli(['recover', '--slot', uniqueName('gone'), '--since', '1m', '--dry-run', '--json']);
    expect(since.code, since.stderr).toBe(0);
    expect(JSON.parse(since.stdout) as RecoverReport).toMatchObject({ found: 'missing', position: null });
  });
});
