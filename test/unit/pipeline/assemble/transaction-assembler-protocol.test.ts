import { describe, expect, it } from 'vitest';
import { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import type { PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { DEFAULT_OUTBOX_COLUMNS, type ColumnMapping } from '../../../../src/pipeline/assemble/outbox-columns.js';
import { RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import { DEFAULT_MESSAGE_PREFIX } from '../../../../src/pipeline/assemble/message-content.js';
import { TransactionAssembler, type AssemblerOptions } from '../../../../src/pipeline/assemble/transaction-assembler.js';
import { type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { decodeRecorded, loadRecorded } from '../../../support/pgoutput-fixtures.js';

// Out-of-sequence pgoutput streams, built from recorded messages: each is a
// retriable PROTOCOL_ERROR (tear down, replay from the slot), never a guess.
const fixtures = loadRecorded('pgoutput-recorded');
const msg = (scenario: string, index: number): PgoutputMessage => decodeRecorded(fixtures, scenario, index);
const A = (i: number) => msg('two_inserts_one_txn', i); // 0 Begin (xid 727), 1 Relation, 2-3 Insert, 4 Commit
const B = (i: number) => msg('alter_table_then_insert_with_message', i); // 0 Begin (xid 729), 1 Relation, 2 Insert, 3 Message, 4 Commit
const COLUMNS: ColumnMapping = DEFAULT_OUTBOX_COLUMNS;
const TABLE: AssemblerOptions = { source: 'table', messagePrefix: DEFAULT_MESSAGE_PREFIX };

function assembler(table = 'public.outbox') {
  const items: PipelineItem[] = [];
  const commits: Transaction[] = [];
  const a = new TransactionAssembler(new RowMapper(COLUMNS, table), { begin: () => {}, item: (i) => items.push(i), commit: (t) => commits.push(t) }, TABLE);
  return { a, items, commits };
}

function protocolError(push: () => void): OutboxTailError {
  try {
    push();
  } catch (error) {
    expect(OutboxTailError.is(error)).toBe(true);
    const e = error as OutboxTailError;
    expect(e.code).toBe('PROTOCOL_ERROR');
    expect(e.retriable).toBe(true);
    return e;
  }
  throw new Error('no protocol error');
}

describe('TransactionAssembler on out-of-sequence streams', () => {
  it('opens a transaction at Begin with no end LSN yet, and closes it at Commit so the next Begin is accepted', () => {
    const begun: Transaction[] = [];
    const snapshots: Pick<Transaction, 'seq' | 'xid' | 'endLsn'>[] = [];
    const a = new TransactionAssembler(
      new RowMapper(COLUMNS, 'public.outbox'),
      {
        begin: (t) => {
          begun.push(t);
          snapshots.push({ seq: t.seq, xid: t.xid, endLsn: t.endLsn });
        },
        item: () => {},
        commit: () => {},
      },
      TABLE,
    );
    a.push(A(0));
    expect(snapshots).toEqual([{ seq: 1, xid: 727, endLsn: null }]);
    a.push(A(4));
    expect(begun[0]!.endLsn).not.toBeNull();
    a.push(B(0));
    expect(snapshots[1]).toEqual({ seq: 2, xid: 729, endLsn: null });
  });

  it('rejects a Begin while another transaction is open', () => {
    const { a } = assembler();
    a.push(A(0));
    expect(protocolError(() => a.push(B(0))).message).toBe('unexpected pgoutput sequence: Begin of xid 729 while xid 727 is open');
  });

  it("rejects a Commit whose commit LSN is not its Begin's final LSN", () => {
    const { a, commits } = assembler();
    a.push(A(0));
    // the format of the two LSNs is left open: today they print as decimal bigints, not as PostgreSQL's X/X
    expect(protocolError(() => a.push(B(4))).message).toMatch(/^unexpected pgoutput sequence: Commit LSN \S+ differs from Begin's final LSN \S+$/);
    expect(commits).toEqual([]);
  });

  it('rejects a Commit without Begin', () => {
    const { a } = assembler();
    expect(protocolError(() => a.push(A(4))).message).toBe('unexpected pgoutput sequence: Commit without Begin');
  });

  it('rejects an outbox INSERT outside a transaction', () => {
    const { a, items } = assembler();
    a.push(A(0));
    a.push(A(1));
    a.push(A(2));
    a.push(A(3));
    a.push(A(4));
    expect(items).toHaveLength(2);
    expect(protocolError(() => a.push(A(2))).message).toBe('unexpected pgoutput sequence: INSERT outside a transaction');
  });

  it('takes the outbox relation by schema and name: a same-named table in another schema is not the outbox', () => {
    const { a, items, commits } = assembler('audit.outbox');
    for (let i = 0; i < 5; i++) a.push(A(i));
    expect(items).toEqual([]);
    expect(commits).toHaveLength(1);
  });

  it('skips messages that carry no outbox events inside a transaction', () => {
    const { a, items, commits } = assembler();
    for (let i = 0; i < 5; i++) a.push(B(i)); // Begin, Relation, Insert, logical Message, Commit
    expect(items).toHaveLength(1);
    expect(commits).toHaveLength(1);
  });
});
