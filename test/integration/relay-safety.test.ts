import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { confirmedFlushLsn, createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';
import { peekTransactions, type ShapeAttempt, untilShapeOccurs, waitForInactive } from '../support/witness-slot.js';

// Servers of its own: its tests build exact WAL shapes (adjacent commits) that the WAL of
// four test files at a time on the shared server kept breaking (5 attempts of 5 missed in CI).
const bed = relayTestbed({ ownStack: 'relay-safety: WAL shapes' });
const relay = (slot: string, variant?: RelayVariant, env: Record<string, string> = {}) => bed.relay(slot, { env, ...(variant ? { variant } : {}) });
const collect = (topics: string[]) => bed.collect(topics);

/** Inserts one outbox row per aggregate id in one transaction; returns the LSN after the commit. */
async function commitRows(type: string, ids: string[], client?: pg.Client): Promise<Lsn> {
  const own = !client;
  const c = client ?? new pg.Client({ connectionString: bed.db.url });
  if (own) await c.connect();
  try {
    await c.query('begin');
    for (const id of ids) await c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', '{}')`, [type, id]);
    await c.query('commit');
    const [row] = (await c.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows;
    return Lsn.parse(row!.lsn);
  } finally {
    if (own) await c.end();
  }
}

describe('LSN safety', () => {
  /**
   * docs/architecture.md#lsn-rules, rule 3: T2 opens, T1 commits, the relay confirms T1, the
   * relay is killed, T2 commits (its commit record starts exactly at T1's end
   * LSN), a new relay must deliver T2. The adjacency is proven on a witness
   * slot, never assumed: other files' WAL can land between T1 and T2's commit,
   * and such an attempt is built again.
   */
  async function adjacentCommit(variant: RelayVariant): Promise<ShapeAttempt<{ t2Delivered: boolean; markerDelivered: boolean }>> {
    const type = uniqueName('adj');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    const witness = uniqueName('witness');
    await createSlot(bed.db.url, slot);
    await createSlot(bed.db.url, witness);
    try {
      const collector = await collect([topic]);
      const first = relay(slot, variant);
      await first.waitForLog(isStreaming);
      const t2 = new pg.Client({ connectionString: bed.db.url });
      await t2.connect();
      await t2.query('begin');
      await t2.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 't2', 'E', '{}')`, [type]);
      await commitRows(type, ['t1']);
      await collector.waitUntil((c) => c.records.some((r) => r.key === 't1'));
      const t1 = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('t1'));
      if (!t1) throw new Error('witness slot: T1 not found');
      const expectedResume = variant === 'confirm-end-plus-one' ? Lsn.of(t1.endLsn + 1n) : t1.endLsn;
      await waitForConfirmed(bed.db.url, slot, expectedResume, 10_000);
      await first.kill('SIGKILL');
      await waitForInactive(bed.db.url, slot);
      const resume = await confirmedFlushLsn(bed.db.url, slot);
      await t2.query('commit');
      await t2.end();
      await commitRows(type, ['marker']);
      const t2Txn = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('t2'));
      if (!t2Txn) throw new Error('witness slot: T2 not found');
      const shape = { t1EndLsn: Lsn.format(t1.endLsn), t2CommitLsn: Lsn.format(t2Txn.commitLsn), resumeLsn: Lsn.format(resume) };
      if (t2Txn.commitLsn !== t1.endLsn) return { shapeMet: false, why: "T2's commit does not start at T1's end LSN (other WAL in between)", shape };
      const second = relay(slot, variant);
      await second.waitForLog(isStreaming);
      await collector.waitUntil((c) => c.records.some((r) => r.key === 'marker'), 20_000);
      // All relays read the same outbox table: stop this one before the next scenario runs.
      await second.kill('SIGKILL');
      // Nothing was written between T1's end and the kill, so no keepalive could move the slot past what the frontier allows.
      expect(resume).toBe(expectedResume);
      return { shapeMet: true, shape, t2Delivered: collector.records.some((r) => r.key === 't2'), markerDelivered: true };
    } finally {
      await query(bed.db.url, 'select pg_drop_replication_slot($1)', [witness]).catch(() => undefined);
    }
  }

  const delivered = (a: { t2Delivered: boolean; markerDelivered: boolean }) => ({ t2Delivered: a.t2Delivered, markerDelivered: a.markerDelivered });

  it('delivers a transaction whose commit starts exactly at the confirmed LSN after a kill -9 (and catches a relay that confirms end LSN + 1)', async () => {
    expect(delivered(await untilShapeOccurs('adjacent-commit correct', () => adjacentCommit('correct')))).toEqual({ t2Delivered: true, markerDelivered: true });
    expect(delivered(await untilShapeOccurs('adjacent-commit confirm-end-plus-one', () => adjacentCommit('confirm-end-plus-one')))).toEqual({
      t2Delivered: false,
      markerDelivered: true,
    });
  });

  it('on SIGTERM publishes and confirms everything in flight, then exits 0', async () => {
    const type = uniqueName('term');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await collect([topic]);
    // Periodic status updates far apart, so only the shutdown path can confirm in time.
    const r = relay(slot, undefined, { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' });
    await r.waitForLog(isStreaming);
    const before = await confirmedFlushLsn(bed.db.url, slot);
    const end = await commitRows(
      type,
      Array.from({ length: 200 }, (_, i) => `k${i}`),
    );
    await collector.waitForDistinct(200);
    expect(await confirmedFlushLsn(bed.db.url, slot)).toBe(before);
    r.child.kill('SIGTERM');
    const exit = await r.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(r.logs.some((l) => l.event === 'drained')).toBe(true);
    expect(await confirmedFlushLsn(bed.db.url, slot)).toBeGreaterThanOrEqual(end);
    // Nothing left to replay: a new relay publishes no duplicates.
    const again = relay(slot);
    await again.waitForLog(isStreaming);
    await commitRows(type, ['after-restart']);
    await collector.waitUntil((c) => c.records.some((x) => x.key === 'after-restart'));
    expect(collector.records).toHaveLength(201);
  });
});

describe('slot ownership and hygiene', () => {
  it('a second relay on the same slot waits as a standby and takes over after the first is killed', async () => {
    const type = uniqueName('standby');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await collect([topic]);
    const active = relay(slot);
    await active.waitForLog(isStreaming);
    const standby = relay(slot);
    await standby.waitForLog((l) => l.event === 'standby');
    await commitRows(type, ['a1', 'a2']);
    await collector.waitForDistinct(2);
    expect(standby.logs.some(isStreaming)).toBe(false);
    await active.kill('SIGKILL');
    await commitRows(type, ['b1', 'b2']);
    const takeover = await standby.waitForLog((l) => l.event === 'takeover', 30_000);
    expect(Number(takeover.waitedMs)).toBeGreaterThan(0);
    await collector.waitForDistinct(4);
    expect([...collector.distinctIds()]).toHaveLength(4);
  });

  it('keeps confirmed_flush_lsn moving while the outbox is idle and another table is busy', async () => {
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const r = relay(slot);
    await r.waitForLog(isStreaming);
    const other = uniqueName('busy');
    await query(bed.db.url, `create table ${other} (id bigserial primary key, filler text)`);
    const start = await confirmedFlushLsn(bed.db.url, slot);
    for (let i = 0; i < 5; i++) await query(bed.db.url, `insert into ${other}(filler) select repeat('x', 500) from generate_series(1, 4000)`);
    const end = await currentWalLsn(bed.db.url);
    expect(end - start).toBeGreaterThan(10_000_000n); // > 10 MB of WAL the slot would otherwise retain
    await waitForConfirmed(bed.db.url, slot, end, 30_000);
  });
});
