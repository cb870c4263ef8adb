import { describe, expect, it, vi } from 'vitest';
import { Checkpointer } from '../../../../src/pipeline/checkpoint/checkpointer.js';
import type { Transaction } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';

// The guards and the memory bound of the ack frontier (checkpointer.test.ts has
// the ordering rules). Transaction i commits at 1000*i and ends at 1000*i + 10.
const txn = (i: number): Transaction => ({ seq: i, xid: 5000 + i, commitLsn: Lsn.of(BigInt(i) * 1000n), commitTime: 0n, endLsn: null });
const end = (i: number) => Lsn.of(BigInt(i) * 1000n + 10n);

function open(cp: Checkpointer, i: number, items = 1): Transaction {
  const t = txn(i);
  cp.begin(t);
  cp.dispatched(t, items);
  t.endLsn = end(i);
  cp.committed(t);
  return t;
}

/** The entry list, which is the checkpointer's memory: private, looked at only here. */
const entries = (cp: Checkpointer) => (cp as unknown as { entries: unknown[] }).entries;

describe('Checkpointer guards', () => {
  it('refuses a Commit whose end LSN is not known yet, and does not move the frontier for it', () => {
    const cp = new Checkpointer(Lsn.of(7n));
    const t = txn(1);
    cp.begin(t);
    expect(() => cp.committed(t)).toThrow('committed() before endLsn was known for xid 5001');
    expect(cp.safeLsn).toBe(7n);
    // still registered, still open: a keepalive may not pass it
    expect(cp.quiescent).toBe(false);
    cp.keepalive(Lsn.of(900n));
    expect(cp.safeLsn).toBe(7n);
    t.endLsn = end(1);
    cp.committed(t);
    expect(cp.safeLsn).toBe(end(1));
    expect(cp.completed).toBe(1);
  });

  it('refuses items, acks and commits of a transaction it never saw begin', () => {
    const cp = new Checkpointer();
    const stranger = txn(9);
    expect(() => cp.dispatched(stranger)).toThrow('unknown transaction xid 5009');
    expect(() => cp.acknowledged(stranger)).toThrow('unknown transaction xid 5009');
    stranger.endLsn = end(9);
    expect(() => cp.committed(stranger)).toThrow('unknown transaction xid 5009');
    expect(cp.safeLsn).toBe(0n);
  });

  it('refuses a late ack for a transaction already behind the frontier', () => {
    const cp = new Checkpointer();
    const t = open(cp, 1);
    cp.acknowledged(t);
    expect(cp.safeLsn).toBe(end(1));
    expect(() => cp.acknowledged(t)).toThrow('unknown transaction xid 5001');
    expect(cp.safeLsn).toBe(end(1));
  });

  it('refuses more acks than dispatched items in one call, and keeps the pending count', () => {
    const cp = new Checkpointer();
    const t = open(cp, 1, 2);
    expect(() => cp.acknowledged(t, 3)).toThrow('more acks than dispatched items for xid 5001');
    expect(cp.safeLsn).toBe(0n);
    cp.acknowledged(t, 2);
    expect(cp.safeLsn).toBe(end(1));
  });

  it('counts a transaction as completed only once it and every one before it are behind the frontier', () => {
    const cp = new Checkpointer();
    expect(cp.quiescent).toBe(true);
    expect(cp.completed).toBe(0);
    const [t1, t2] = [open(cp, 1), open(cp, 2)];
    cp.begin(txn(3));
    expect(cp.quiescent).toBe(false);
    cp.acknowledged(t2);
    // t2 is done but t1 is not: nothing is behind the frontier yet
    expect(cp.completed).toBe(0);
    expect(cp.safeLsn).toBe(0n);
    cp.acknowledged(t1);
    expect(cp.completed).toBe(2);
    expect(cp.safeLsn).toBe(end(2));
    // t3 is still open
    expect(cp.quiescent).toBe(false);
  });
});

describe('Checkpointer memory bound (entry list compaction)', () => {
  it('drops completed transactions in batches of more than 1024, not on every ack', () => {
    const cp = new Checkpointer();
    const splice = vi.spyOn(entries(cp), 'splice');
    for (let i = 1; i <= 1024; i++) cp.acknowledged(open(cp, i));
    expect(entries(cp)).toHaveLength(1024);
    expect(splice).not.toHaveBeenCalled();
    cp.acknowledged(open(cp, 1025));
    expect(entries(cp)).toHaveLength(0);
    for (let i = 1026; i <= 3000; i++) cp.acknowledged(open(cp, i));
    expect(splice).toHaveBeenCalledTimes(2); // at 1025 and 2050
    expect(entries(cp)).toHaveLength(3000 - 2050);
    expect(cp.safeLsn).toBe(end(3000));
    expect(cp.completed).toBe(3000);
    expect(cp.quiescent).toBe(true);
  });

  it('keeps the list while half of it or more is still in flight, then compacts without losing a transaction', () => {
    const cp = new Checkpointer();
    const all = Array.from({ length: 3000 }, (_, k) => open(cp, k + 1));
    for (let k = 1; k <= 1500; k++) cp.acknowledged(all[k - 1]!);
    // 1500 behind the frontier, 1500 in flight: nothing dropped yet
    expect(entries(cp)).toHaveLength(3000);
    expect(cp.safeLsn).toBe(end(1500));
    cp.acknowledged(all[1500]!);
    expect(entries(cp)).toHaveLength(1499);
    expect(cp.completed).toBe(1501);
    expect(cp.safeLsn).toBe(end(1501));
    // acks out of order across the compaction still move the frontier contiguously
    cp.acknowledged(all[2999]!);
    expect(cp.safeLsn).toBe(end(1501));
    for (let k = 1502; k <= 2999; k++) cp.acknowledged(all[k - 1]!);
    expect(cp.safeLsn).toBe(end(3000));
    expect(cp.quiescent).toBe(true);
    expect(cp.completed).toBe(3000);
    cp.keepalive(Lsn.of(end(3000) + 1n));
    expect(cp.safeLsn).toBe(end(3000) + 1n);
  });
});
