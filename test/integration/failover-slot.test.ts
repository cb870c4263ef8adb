/**
 * `outbox-tail init --failover-slot` (issue 12): on PostgreSQL 17+ the slot is
 * created with failover = true (pg_replication_slots.failover = t); on older
 * servers init refuses, naming the server version and the fix, and creates
 * nothing. The same file runs on every stack: the branch taken is the server's
 * (PG 15 native by default, 17 and 18 through bin/with-engine.sh).
 */
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { query } from '../support/slot.js';

const bed = relayTestbed();

/** The CLI against this file's database. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { OUTBOX_TAIL_DATABASE_URL: bed.db.url, ...env });
}

async function serverVersionNum(): Promise<number> {
  const [row] = await query<{ num: string }>(bed.db.url, `select current_setting('server_version_num') as num`);
  return Number(row!.num);
}

/** pg_replication_slots.failover, or undefined when the slot does not exist (null when the server has no such column). */
async function slotFailover(slot: string): Promise<boolean | null | undefined> {
  const rows = await query<{ failover: boolean | null }>(
    bed.db.url,
    `select (to_jsonb(s) ->> 'failover')::boolean as failover from pg_replication_slots s where slot_name = $1`,
    [slot],
  );
  return rows.length === 0 ? undefined : rows[0]!.failover;
}

describe('init --failover-slot', () => {
  it('creates a failover slot on PostgreSQL 17+ and refuses with the version and the fix on older servers', async () => {
    const version = await serverVersionNum();
    const slot = uniqueName('failover');
    const plain = uniqueName('plain');
    const init = await cli(['init', '--slot', slot, '--failover-slot']);
    const initPlain = await cli(['init', '--slot', plain]);
    expect(initPlain.code, initPlain.stderr).toBe(0);
    const status = JSON.parse((await cli(['status', '--slot', plain, '--json'])).stdout);
    if (version >= 170000) {
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain(`slot ${slot} created (pgoutput, failover = true)`);
      expect(await slotFailover(slot)).toBe(true);
      expect(await slotFailover(plain)).toBe(false);
      expect(status).toMatchObject({ exists: true, failover: false, synced: false });
      expect(JSON.parse((await cli(['status', '--slot', slot, '--json'])).stdout)).toMatchObject({ exists: true, failover: true, synced: false });
      expect((await cli(['status', '--slot', slot])).stdout).toMatch(/^failover +true$/m);
      // Again, through the env var: the slot exists and says so.
      const again = await cli(['init', '--slot', slot], { OUTBOX_TAIL_FAILOVER_SLOT: 'true' });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`slot ${slot} exists (failover = true)`);
      // An existing non-failover slot is not silently left as it is.
      const upgrade = await cli(['init', '--slot', plain, '--failover-slot']);
      expect(upgrade.code, upgrade.stderr).toBe(0);
      expect(upgrade.stderr).toContain(`slot ${plain} exists with failover = false`);
      expect(upgrade.stderr).toContain('ALTER_REPLICATION_SLOT');
    } else {
      expect(init.code).toBe(3);
      expect(init.stderr).toContain('FAILOVER_SLOT_UNSUPPORTED');
      expect(init.stderr).toMatch(/needs PostgreSQL 17 or later, but the server at \S+ is PostgreSQL \d+\.\d+/);
      expect(init.stderr).toContain('upgrade the server to PostgreSQL 17+, or create the slot without --failover-slot (OUTBOX_TAIL_FAILOVER_SLOT=false)');
      expect(await slotFailover(slot)).toBeUndefined();
      // The env var takes the same path.
      const viaEnv = await cli(['init', '--slot', slot], { OUTBOX_TAIL_FAILOVER_SLOT: 'true' });
      expect(viaEnv.code).toBe(3);
      expect(viaEnv.stderr).toContain('FAILOVER_SLOT_UNSUPPORTED');
      // No failover column before 17: status says so instead of guessing.
      expect(status).toMatchObject({ exists: true, failover: null, synced: null });
      expect((await cli(['status', '--slot', plain])).stdout).toMatch(/^failover +- \(no failover slots before PostgreSQL 17\)$/m);
    }
  });

  it('--create-slot with OUTBOX_TAIL_FAILOVER_SLOT=true creates the slot the same way when the relay starts (or refuses before 17)', async () => {
    const version = await serverVersionNum();
    const slot = uniqueName('failover_run');
    const relay = bed.relay(slot, { env: { OUTBOX_TAIL_CREATE_SLOT: 'true', OUTBOX_TAIL_FAILOVER_SLOT: 'true' } });
    if (version >= 170000) {
      const created = await relay.waitForLog((l) => l.event === 'slot-created');
      expect(created.failover).toBe(true);
      expect(await slotFailover(slot)).toBe(true);
    } else {
      const exit = await relay.exited;
      expect(exit.code).toBe(3);
      expect(relay.stderr()).toContain('FAILOVER_SLOT_UNSUPPORTED');
      expect(await slotFailover(slot)).toBeUndefined();
    }
  });

  it('warns at start when synchronized_standby_slots names a physical slot this server does not have (a promoted standby inherits it), since PostgreSQL then holds back the failover slot', async () => {
    const version = await serverVersionNum();
    const slot = uniqueName('held_back');
    if (version < 170000) {
      // No failover slots, no such setting: nothing to warn about.
      const relay = bed.relay(slot, { env: { OUTBOX_TAIL_CREATE_SLOT: 'true' } });
      await relay.waitForLog((l) => l.event === 'streaming');
      expect(relay.logs.some((l) => l.event === 'synchronized-standby-slots-missing')).toBe(false);
      return;
    }
    // A server-wide setting on the shared server: it only affects failover
    // slots, and only this file makes those.
    const missing = uniqueName('gone_standby');
    await query(bed.db.url, `alter system set synchronized_standby_slots = '${missing}'`);
    await query(bed.db.url, 'select pg_reload_conf()');
    try {
      const relay = bed.relay(slot, { env: { OUTBOX_TAIL_CREATE_SLOT: 'true', OUTBOX_TAIL_FAILOVER_SLOT: 'true' } });
      const warning = await relay.waitForLog((l) => l.event === 'synchronized-standby-slots-missing');
      expect(warning.level).toBe('warn');
      expect(warning.missing).toEqual([missing]);
      expect(warning.msg).toContain('ALTER SYSTEM RESET synchronized_standby_slots');
      await relay.kill('SIGKILL');
      // A plain (non-failover) slot is not held back: no warning.
      const plain = bed.relay(uniqueName('plain_run'), { env: { OUTBOX_TAIL_CREATE_SLOT: 'true' } });
      await plain.waitForLog((l) => l.event === 'streaming');
      expect(plain.logs.some((l) => l.event === 'synchronized-standby-slots-missing')).toBe(false);
    } finally {
      await query(bed.db.url, 'alter system reset synchronized_standby_slots');
      await query(bed.db.url, 'select pg_reload_conf()');
    }
  });
});
