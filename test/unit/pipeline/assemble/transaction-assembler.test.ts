import { describe, expect, it } from 'vitest';
import type { OutboxEvent, PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { DEFAULT_OUTBOX_COLUMNS as COLUMNS } from '../../../../src/pipeline/assemble/outbox-columns.js';
import { RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import { DEFAULT_MESSAGE_PREFIX } from '../../../../src/pipeline/assemble/message-content.js';
import { TransactionAssembler, type AssemblerOptions } from '../../../../src/pipeline/assemble/transaction-assembler.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { decodePgoutput } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { loadRecorded } from '../../../support/pgoutput-fixtures.js';

const TABLE: AssemblerOptions = { source: 'table', messagePrefix: DEFAULT_MESSAGE_PREFIX };
const fixtures = loadRecorded('pgoutput-recorded');

function run(names: string[], columns = COLUMNS) {
  const log: string[] = [];
  const items: PipelineItem[] = [];
  const commits: Transaction[] = [];
  const assembler = new TransactionAssembler(
    new RowMapper(columns, 'public.outbox'),
    {
      begin: (t) => log.push(`begin ${t.seq}`),
      item: (i) => {
        items.push(i);
        log.push(i.kind);
      },
      commit: (t) => {
        commits.push(t);
        log.push(`commit ${t.seq}`);
      },
    },
    TABLE,
  );
  for (const name of names) for (const m of fixtures[name]!) assembler.push(decodePgoutput(Buffer.from(m.hex, 'hex')));
  return { log, items, commits, assembler };
}

describe('TransactionAssembler + RowMapper', () => {
  it('emits each insert as an event before the commit and sets the commit end LSN at Commit', () => {
    const { log, items, commits } = run(['two_inserts_one_txn']);
    expect(log).toEqual(['begin 1', 'event', 'event', 'commit 1']);
    const event = (items[0] as { event: OutboxEvent }).event;
    expect(event).toMatchObject({
      id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      aggregateType: 'order',
      aggregateId: 'o-1',
      eventType: 'OrderCreated',
      headers: { trace: 'abc' }, // the non-string entry "n": 1 is dropped
      createdAt: '2026-11-30T00:00:00.000000Z',
      table: 'public.outbox',
    });
    expect(event.payload.toString()).toBe('{"note": "café ☕", "total": 12.5}');
    expect(commits[0]!.endLsn).toBe(Lsn.parse(fixtures.two_inserts_one_txn![4]!.lsn));
    expect(event.txn.commitLsn).toBe(commits[0]!.commitLsn);
  });

  it('maps by column name from the latest Relation, so ALTER TABLE ADD COLUMN mid-stream keeps working', () => {
    const { items } = run(['two_inserts_one_txn', 'alter_table_then_insert_with_message']);
    expect(items).toHaveLength(3);
    const third = items[2]!;
    // this recorded row has headers = "not-an-object": malformed, and says why, with its id
    expect(third.kind).toBe('malformed');
    expect(third.kind === 'malformed' && third.row).toMatchObject({
      id: '22222222-2222-4222-8222-222222222222',
      reason: 'column headers must be a JSON object, got string',
    });
  });

  it('reports a mapped column missing from the table as malformed, naming the column', () => {
    const { items } = run(['two_inserts_one_txn'], { ...COLUMNS, aggregateType: 'aggregatetype' });
    expect(items.every((i) => i.kind === 'malformed')).toBe(true);
    expect(items[0]!.kind === 'malformed' && items[0]!.row.reason).toBe('column(s) aggregatetype missing from public.outbox');
  });

  it('ignores inserts into tables other than the outbox but still tracks their transactions', () => {
    const seen: string[] = [];
    const other = new TransactionAssembler(
      new RowMapper(COLUMNS, 'public.orders'),
      {
        begin: () => seen.push('begin'),
        item: (i) => seen.push(i.kind),
        commit: () => seen.push('commit'),
      },
      TABLE,
    );
    for (const m of fixtures.two_inserts_one_txn!) other.push(decodePgoutput(Buffer.from(m.hex, 'hex')));
    expect(seen).toEqual(['begin', 'commit']);
  });

  it('rejects a Commit without Begin as a retriable protocol error', () => {
    const { assembler } = run([]);
    const commit = decodePgoutput(Buffer.from(fixtures.two_inserts_one_txn![4]!.hex, 'hex'));
    expect(() => assembler.push(commit)).toThrow(/Commit without Begin/);
  });
});
