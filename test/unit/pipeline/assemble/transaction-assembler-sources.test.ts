import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGE_PREFIX, MessageContent } from '../../../../src/pipeline/assemble/message-content.js';
import { DEFAULT_OUTBOX_COLUMNS } from '../../../../src/pipeline/assemble/outbox-columns.js';
import type { PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import { TransactionAssembler, type AssemblerOptions } from '../../../../src/pipeline/assemble/transaction-assembler.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { decodePgoutput, type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { MESSAGE_VARIANTS } from '../../../support/broken-message-mapper.js';
import { loadRecorded } from '../../../support/pgoutput-fixtures.js';

// Which pgoutput messages become pipeline items, per --source and --message-prefix,
// and what shape each item has. Recorded bytes for the table row
// (test/fixtures/pgoutput-recorded.json), hand-built messages for the rest.

type Of<T extends PgoutputMessage['tag']> = Extract<PgoutputMessage, { tag: T }>;
const fixtures = loadRecorded('pgoutput-recorded');
// 0 Begin (xid 727), 1 Relation public.outbox, 2-3 Insert, 4 Commit
const recorded = fixtures.two_inserts_one_txn!.map((m) => decodePgoutput(Buffer.from(m.hex, 'hex')));
const [BEGIN, RELATION, INSERT, , COMMIT] = recorded as [Of<'begin'>, Of<'relation'>, Of<'insert'>, Of<'insert'>, Of<'commit'>];

const message = (over: Partial<Of<'message'>> = {}): Of<'message'> => ({
  tag: 'message',
  transactional: true,
  lsn: Lsn.of(BEGIN.finalLsn - 8n),
  prefix: DEFAULT_MESSAGE_PREFIX,
  content: MessageContent.encode({ id: 'm1', aggregateType: 'order', aggregateId: 'o-1', eventType: 'shipped', headers: {}, createdAt: null }, '{}'),
  ...over,
});

function assemble(options: AssemblerOptions, stream: PgoutputMessage[]) {
  const log: string[] = [];
  const items: PipelineItem[] = [];
  const commits: Transaction[] = [];
  const assembler = new TransactionAssembler(
    new RowMapper(DEFAULT_OUTBOX_COLUMNS, 'public.outbox'),
    {
      begin: (t) => log.push(`begin ${t.seq}`),
      item: (i) => {
        items.push(i);
        log.push(i.kind === 'event' ? `event ${i.event.id}` : `malformed ${i.row.id}`);
      },
      commit: (t) => {
        commits.push(t);
        log.push(`commit ${t.seq}`);
      },
    },
    options,
  );
  for (const m of stream) assembler.push(m);
  return { log, items, commits };
}
const inTxn = (...inside: PgoutputMessage[]) => [BEGIN, RELATION, ...inside, COMMIT];

describe('TransactionAssembler: what becomes an item', () => {
  it('publishes nothing for updates, deletes, truncates, origins and types, even on the outbox table: only an INSERT is an event', () => {
    const { relationId } = RELATION;
    const others: PgoutputMessage[] = [
      { tag: 'update', relationId, values: INSERT.values },
      { tag: 'delete', relationId },
      { tag: 'truncate', relationIds: [relationId] },
      { tag: 'origin', originLsn: BEGIN.finalLsn, name: 'upstream' },
      { tag: 'type', typeOid: 3802, schema: 'pg_catalog', name: 'jsonb' },
    ];
    const { log, commits } = assemble({ source: 'both', messagePrefix: DEFAULT_MESSAGE_PREFIX }, inTxn(...others));
    expect(log).toEqual(['begin 1', 'commit 1']);
    expect(commits[0]!.endLsn).toBe(COMMIT.endLsn);
  });

  it('takes a message whose prefix is exactly --message-prefix: not a longer or shorter one, not the heartbeat prefix', () => {
    const stream = inTxn(
      ...['app', 'ap', 'app2', 'app-heartbeat', DEFAULT_MESSAGE_PREFIX].map((prefix, i) =>
        message({
          prefix,
          content: MessageContent.encode({ id: prefix, aggregateType: 'a', aggregateId: `k${i}`, eventType: 't', headers: {}, createdAt: null }, '{}'),
        }),
      ),
    );
    expect(assemble({ source: 'messages', messagePrefix: 'app' }, stream).log).toEqual(['begin 1', 'event app', 'commit 1']);
  });

  it('passes a transactional message it cannot read on as a malformed item in its transaction, with the reason and where it is in the WAL', () => {
    const bad = message({ content: Buffer.from('{"v":1,"id":"m1","aggregate_type":"order","aggregate_id":"o-1","event_type":"shipped"}\nnot json') });
    const { items, commits } = assemble({ source: 'messages', messagePrefix: DEFAULT_MESSAGE_PREFIX }, inTxn(bad));
    expect(items).toEqual([
      {
        kind: 'malformed',
        row: {
          id: 'm1',
          reason: 'payload is not valid JSON',
          table: DEFAULT_MESSAGE_PREFIX,
          txn: commits[0],
          message: { prefix: DEFAULT_MESSAGE_PREFIX, lsn: bad.lsn, transactional: true },
        },
      },
    ]);
  });

  it('passes a readable transactional message on as an event of its transaction', () => {
    const { items, commits } = assemble({ source: 'messages', messagePrefix: DEFAULT_MESSAGE_PREFIX }, inTxn(message()));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'event', event: { id: 'm1', eventType: 'shipped', table: DEFAULT_MESSAGE_PREFIX } });
    expect(items[0]!.kind === 'event' && items[0]!.event.txn).toBe(commits[0]);
  });

  it('gives each non-transactional message a transaction of its own (xid 0, at the message LSN), numbered in stream order with the others', () => {
    const lone = message({ transactional: false });
    const { log, commits } = assemble({ source: 'messages', messagePrefix: DEFAULT_MESSAGE_PREFIX }, [lone, ...inTxn(message()), lone]);
    expect(log).toEqual(['begin 1', 'malformed m1', 'commit 1', 'begin 2', 'event m1', 'commit 2', 'begin 3', 'malformed m1', 'commit 3']);
    expect(commits[0]).toMatchObject({ seq: 1, xid: 0, commitLsn: lone.lsn, endLsn: lone.lsn });
    expect(commits[2]).toMatchObject({ seq: 3, xid: 0, commitLsn: lone.lsn, endLsn: lone.lsn });
  });

  it('lets the negative control publish a non-transactional message through the mapper seam: its own transaction then carries an event', () => {
    const lone = message({ transactional: false });
    const broken = MESSAGE_VARIANTS['publish-non-transactional']!.messageMapper;
    const { items, commits } = assemble({ source: 'messages', messagePrefix: DEFAULT_MESSAGE_PREFIX, mapMessage: broken }, [lone]);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'event', event: { id: 'm1', txn: commits[0] } });
    expect(commits[0]!.endLsn).toBe(lone.lsn);
  });
});
