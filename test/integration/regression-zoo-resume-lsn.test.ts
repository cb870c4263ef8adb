/**
 * The regression zoo's resume-LSN shapes (docs/regression-zoo.md): T1 commits,
 * the relay confirms T1's end LSN Y, and the very next WAL record is T2's first
 * row, so T2's Begin and first row arrive at Y, the LSN the next relay resumes
 * at. A restart filter that takes Y as "processed" drops that row:
 * - DBZ-5915: T2 was in progress (begun, a row written) when the relay died;
 * - FLINK-39265: T2 begins only after the relay died (after the checkpoint).
 * The shape needs the exact WAL layout, so the file runs on servers of its own
 * and proves each attempt on a witness slot (as relay-begin-at-confirmed.test.ts does);
 * an attempt where other WAL landed in between is built again.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { confirmedFlushLsn, createSlot, query, waitForConfirmed } from '../support/slot.js';
import { peekTransactions, type ShapeAttempt, untilShapeOccurs, waitForInactive } from '../support/witness-slot.js';

const bed = relayTestbed({ ownStack: 'regression zoo: resume-LSN shapes' });

/** When T2 begins: before the kill (in progress, DBZ-5915) or after it (FLINK-39265). */
type When = 'in-progress-at-kill' | 'after-kill';

interface Outcome {
  /** T2's rows in commit order: the first one shares T2's Begin LSN. */
  delivered: { first: boolean; second: boolean };
  markerDelivered: boolean;
}

async function beginAtResumeLsn(when: When, variant: RelayVariant): Promise<ShapeAttempt<Outcome>> {
  const url = bed.db.url;
  const type = uniqueName('resume');
  const slot = uniqueName('slot');
  const witness = uniqueName('witness');
  await createSlot(url, slot);
  await createSlot(url, witness);
  const insert = (key: string) => `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ('${type}', '${key}', 'E', '{}')`;
  const t2 = new pg.Client({ connectionString: url });
  await t2.connect();
  let t2Open = false;
  try {
    const collector = await bed.collect([`outbox.event.${type}`]);
    const first = bed.relay(slot, { variant });
    await first.waitForLog(isStreaming);
    // T1 commits and, in the same round trip when T2 is in progress at the kill, T2 begins with its first row.
    await t2.query(when === 'in-progress-at-kill' ? `begin; ${insert('t1')}; commit; begin; ${insert('t2-first')};` : `begin; ${insert('t1')}; commit;`);
    t2Open = when === 'in-progress-at-kill';
    await collector.waitUntil((c) => c.records.some((r) => r.key === 't1'), 20_000, 't1');
    const t1 = (await peekTransactions(url, witness)).find((t) => t.aggregateIds.includes('t1'));
    if (!t1) throw new Error('witness slot: T1 not found');
    await waitForConfirmed(url, slot, t1.endLsn, 10_000);
    await first.kill('SIGKILL');
    await waitForInactive(url, slot);
    const resume = await confirmedFlushLsn(url, slot);
    await t2.query(when === 'after-kill' ? `begin; ${insert('t2-first')}; ${insert('t2-second')}; commit;` : `${insert('t2-second')}; commit;`);
    t2Open = false;
    await query(url, insert('marker'));
    const t2Txn = (await peekTransactions(url, witness)).find((t) => t.aggregateIds.includes('t2-first'));
    if (!t2Txn) throw new Error('witness slot: T2 not found');
    const shape = { t1EndLsn: Lsn.format(t1.endLsn), t2BeginLsn: Lsn.format(t2Txn.beginLsn), resumeLsn: Lsn.format(resume) };
    if (t2Txn.beginLsn !== t1.endLsn) return { shapeMet: false, why: "T2 did not begin at T1's end LSN (other WAL in between)", shape };
    if (resume !== t1.endLsn) return { shapeMet: false, why: "the slot does not resume at T1's end LSN", shape };
    const second = bed.relay(slot, { variant });
    await second.waitForLog(isStreaming);
    await collector.waitUntil((c) => c.records.some((r) => r.key === 'marker'), 20_000, 'marker');
    // Every relay of this file reads the same outbox table: stop it before the next attempt.
    await second.kill('SIGKILL');
    const has = (key: string) => collector.records.some((r) => r.key === key);
    return { shapeMet: true, shape, delivered: { first: has('t2-first'), second: has('t2-second') }, markerDelivered: true };
  } finally {
    if (t2Open) await t2.query('rollback').catch(() => undefined);
    await t2.end().catch(() => undefined);
    await query(url, 'select pg_drop_replication_slot($1)', [witness]).catch(() => undefined);
  }
}

const outcome = (a: Outcome) => ({ delivered: a.delivered, markerDelivered: a.markerDelivered });

describe('regression zoo: the event right after BEGIN skipped (DBZ-5915)', () => {
  // The correct relay's side is relay-begin-at-confirmed.test.ts, 'delivers T2 whose Begin LSN equals the confirmed commit
  // end LSN of T1 after a kill -9 ...' (T2 in progress at the kill, its Begin at the confirmed LSN; its control drops the whole
  // transaction). This is the control with Debezium's exact symptom: only the change at the resume LSN goes.
  it('negative control: a relay that drops replayed changes at or below its resume LSN loses the row right after BEGIN of a transaction in progress at the kill', async () => {
    const broken = await untilShapeOccurs('DBZ-5915 skip-change-at-resume-lsn', () => beginAtResumeLsn('in-progress-at-kill', 'skip-change-at-resume-lsn'));
    expect(broken.shape.t2BeginLsn).toBe(broken.shape.resumeLsn);
    expect(outcome(broken)).toEqual({ delivered: { first: false, second: true }, markerDelivered: true });
  });
});

describe('regression zoo: INSERTs dropped after a checkpoint recovery (FLINK-39265)', () => {
  it('delivers every row of the first transaction after a kill -9 when it begins exactly at the confirmed LSN (and catches a relay that drops replayed changes at or below its resume LSN)', async () => {
    const correct = await untilShapeOccurs('FLINK-39265 correct', () => beginAtResumeLsn('after-kill', 'correct'));
    expect(correct.shape.t2BeginLsn).toBe(correct.shape.resumeLsn);
    expect(outcome(correct)).toEqual({ delivered: { first: true, second: true }, markerDelivered: true });
    const broken = await untilShapeOccurs('FLINK-39265 skip-change-at-resume-lsn', () => beginAtResumeLsn('after-kill', 'skip-change-at-resume-lsn'));
    expect(broken.shape.t2BeginLsn).toBe(broken.shape.resumeLsn);
    // The claim: at least one INSERT of that transaction is lost (its first, which shares the Begin's LSN).
    expect(outcome(broken).delivered.first).toBe(false);
    expect(outcome(broken).markerDelivered).toBe(true);
  });
});
