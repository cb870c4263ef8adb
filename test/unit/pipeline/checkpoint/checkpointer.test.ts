import { describe, expect, it } from 'vitest';
import { Checkpointer } from '../../../../src/pipeline/checkpoint/checkpointer.js';
import type { Transaction } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';

let seq = 0;
function txn(commitLsn: bigint, endLsn: bigint): Transaction & { end: Lsn } {
  return { seq: ++seq, xid: 1000 + seq, commitLsn: Lsn.of(commitLsn), commitTime: 0n, endLsn: null, end: Lsn.of(endLsn) };
}
function commit(cp: Checkpointer, t: Transaction & { end: Lsn }) {
  t.endLsn = t.end;
  cp.committed(t);
}

describe('Checkpointer (ack frontier)', () => {
  it('does not confirm an LSN before Kafka acked', () => {
    const cp = new Checkpointer();
    const t1 = txn(100n, 150n);
    cp.begin(t1);
    cp.dispatched(t1, 2);
    commit(cp, t1);
    expect(cp.safeLsn).toBe(0n);
    cp.acknowledged(t1);
    expect(cp.safeLsn).toBe(0n);
    cp.acknowledged(t1);
    expect(cp.safeLsn).toBe(150n);
  });

  it('confirms exactly the commit end LSN, never more', () => {
    const cp = new Checkpointer();
    const t1 = txn(100n, 150n);
    cp.begin(t1);
    commit(cp, t1);
    expect(cp.safeLsn).toBe(150n);
  });

  it('keeps the frontier contiguous when a later transaction is acked first', () => {
    const cp = new Checkpointer();
    const [t1, t2, t3] = [txn(100n, 150n), txn(200n, 250n), txn(300n, 350n)];
    for (const t of [t1, t2, t3]) {
      cp.begin(t);
      cp.dispatched(t);
      commit(cp, t);
    }
    cp.acknowledged(t3);
    cp.acknowledged(t2);
    expect(cp.safeLsn).toBe(0n);
    cp.acknowledged(t1);
    expect(cp.safeLsn).toBe(350n);
    expect(cp.completed).toBe(3);
  });

  it('does not pass a transaction whose Commit has not arrived, even if all its rows are acked', () => {
    const cp = new Checkpointer();
    const t1 = txn(100n, 150n);
    cp.begin(t1);
    cp.dispatched(t1, 3);
    cp.acknowledged(t1, 3);
    expect(cp.safeLsn).toBe(0n);
    commit(cp, t1);
    expect(cp.safeLsn).toBe(150n);
  });

  it('confirms a keepalive LSN only when nothing is open or in flight', () => {
    const cp = new Checkpointer();
    cp.keepalive(Lsn.of(500n));
    expect(cp.safeLsn).toBe(500n);
    const t1 = txn(600n, 650n);
    cp.begin(t1);
    cp.keepalive(Lsn.of(700n)); // t1 open: 700 would skip it after a crash
    expect(cp.safeLsn).toBe(500n);
    cp.dispatched(t1);
    commit(cp, t1);
    cp.keepalive(Lsn.of(800n)); // committed but not acked
    expect(cp.safeLsn).toBe(500n);
    cp.acknowledged(t1);
    expect(cp.safeLsn).toBe(650n);
    cp.keepalive(Lsn.of(800n));
    expect(cp.safeLsn).toBe(800n);
  });

  it('never moves backwards', () => {
    const cp = new Checkpointer();
    cp.keepalive(Lsn.of(900n));
    const t1 = txn(100n, 150n); // a lower end LSN after a keepalive cannot lower the frontier
    cp.begin(t1);
    commit(cp, t1);
    expect(cp.safeLsn).toBe(900n);
  });

  it('refuses more acks than dispatched items', () => {
    const cp = new Checkpointer();
    const t1 = txn(100n, 150n);
    cp.begin(t1);
    cp.dispatched(t1);
    cp.acknowledged(t1);
    expect(() => cp.acknowledged(t1)).toThrow(/more acks than dispatched/);
  });
});

describe('Checkpointer frontier commit time (what outbox-tail recover backfills from)', () => {
  it('is the commit time of the last transaction behind the frontier, not of a later one acked out of order', () => {
    const cp = new Checkpointer();
    const t1 = { ...txn(100n, 150n), commitTime: 1_000n };
    const t2 = { ...txn(200n, 250n), commitTime: 2_000n };
    for (const t of [t1, t2]) {
      cp.begin(t);
      cp.dispatched(t);
      commit(cp, t);
    }
    expect(cp.frontierCommitTime).toBeNull();
    cp.acknowledged(t2);
    expect(cp.frontierCommitTime).toBeNull();
    cp.acknowledged(t1);
    expect(cp.frontierCommitTime).toBe(2_000n);
  });

  it('does not move on a keepalive: no transaction stands behind that position', () => {
    const cp = new Checkpointer();
    const t1 = { ...txn(100n, 150n), commitTime: 1_000n };
    cp.begin(t1);
    commit(cp, t1);
    cp.keepalive(Lsn.of(900n));
    expect(cp.safeLsn).toBe(900n);
    expect(cp.frontierCommitTime).toBe(1_000n);
  });
});
