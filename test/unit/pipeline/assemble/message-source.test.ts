import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/config/config-schema.js';
import { buildOutboxMessage } from '../../../../src/consumer/write-outbox-event.js';
import { MessageContent, type ParsedMessageContent, type UnparsableContent } from '../../../../src/pipeline/assemble/message-content.js';
import type { MalformedRow, OutboxEvent, PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { DEFAULT_OUTBOX_COLUMNS as COLUMNS } from '../../../../src/pipeline/assemble/outbox-columns.js';
import { RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import { TransactionAssembler, type EventSource } from '../../../../src/pipeline/assemble/transaction-assembler.js';
import { badRowPolicies } from '../../../../src/pipeline/publish/bad-row-policy.js';
import { malformedRowError, malformedRowRecord } from '../../../../src/pipeline/publish/malformed-policy.js';
import { heartbeatPrefix } from '../../../../src/pipeline/source/heartbeat.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import { decodeScenario, loadRecorded } from '../../../support/pgoutput-fixtures.js';

// Bytes recorded from PostgreSQL 15 by test/fixtures/record-pgoutput-messages.sh:
// outbox_tail.emit() (migrations/0003_emit_message.sql) next to a table row, a
// hand-written v1 message, a rolled-back savepoint, a foreign prefix, a
// non-transactional message.
const recorded = loadRecorded('pgoutput-recorded-messages');
const decodeAll = (scenario: string): PgoutputMessage[] => decodeScenario(recorded, scenario);
type Of<T extends PgoutputMessage['tag']> = Extract<PgoutputMessage, { tag: T }>;

function assemble(scenarios: string[], source: EventSource, messagePrefix = 'outbox-tail') {
  const log: string[] = [];
  const items: PipelineItem[] = [];
  const commits: Transaction[] = [];
  const assembler = new TransactionAssembler(
    new RowMapper(COLUMNS, 'public.outbox'),
    {
      begin: (t) => log.push(`begin ${t.seq}`),
      item: (i) => {
        items.push(i);
        log.push(i.kind === 'event' ? `event ${i.event.eventType}` : 'malformed');
      },
      commit: (t) => {
        commits.push(t);
        log.push(`commit ${t.seq}`);
      },
    },
    { source, messagePrefix },
  );
  for (const s of scenarios) for (const m of decodeAll(s)) assembler.push(m);
  return { log, items, commits };
}
const eventOf = (item: PipelineItem | undefined): OutboxEvent => {
  if (item?.kind !== 'event') throw new Error(`expected an event, got ${item?.kind}`);
  return item.event;
};
const malformedOf = (item: PipelineItem | undefined): MalformedRow => {
  if (item?.kind !== 'malformed') throw new Error(`expected a malformed item, got ${item?.kind}`);
  return item.row;
};
const parsed = (content: Buffer): ParsedMessageContent => {
  const result = MessageContent.parse(content);
  if ('reason' in result) throw new Error(result.reason);
  return result;
};
const unparsable = (content: string): UnparsableContent => {
  const result = MessageContent.parse(Buffer.from(content));
  if (!('reason' in result)) throw new Error('parsed');
  return result;
};

describe('pgoutput decoder: logical decoding messages on recorded bytes', () => {
  it('reads the transactional flag, the LSN (end of the message record), the prefix and the content of an outbox_tail.emit() message', () => {
    const messages = decodeAll('row_then_emit_then_raw_message_one_txn');
    expect(messages.map((m) => m.tag)).toEqual(['begin', 'relation', 'insert', 'message', 'message', 'commit']);
    const [emitted, raw] = [messages[3] as Of<'message'>, messages[4] as Of<'message'>];
    expect(emitted).toMatchObject({ tag: 'message', transactional: true, lsn: Lsn.parse('0/152F508'), prefix: 'outbox-tail' });
    // The last message record ends where the commit record starts: the LSN is the record's end.
    const commit = messages[5] as Of<'commit'>;
    expect(raw.lsn).toBe(commit.commitLsn);
    expect(raw.content.toString('utf8')).toBe(
      '{"v":1,"id":"00000000-0000-0000-0000-000000000003","aggregate_type":"order","aggregate_id":"o-1","event_type":"shipped","headers":null,"created_at":null}\n{ "kept" :  "as written" }',
    );
  });

  it('decodes a non-transactional message outside any Begin..Commit, before the transaction that follows it', () => {
    const messages = decodeAll('non_transactional_emit_then_txn');
    expect(messages.map((m) => m.tag)).toEqual(['message', 'begin', 'message', 'commit']);
    expect(messages[0]).toMatchObject({ transactional: false, lsn: Lsn.parse('0/152FAE8'), prefix: 'outbox-tail' });
    expect(messages[2]).toMatchObject({ transactional: true, prefix: 'outbox-tail' });
  });

  it('never sees a message of a rolled-back savepoint or transaction: PostgreSQL discards them', () => {
    const messages = decodeAll('savepoint_rollback_and_foreign_prefix');
    expect(messages.map((m) => (m.tag === 'message' ? `message ${m.prefix}` : m.tag))).toEqual([
      'begin',
      'message outbox-tail',
      'message someone-else',
      'commit',
    ]);
    expect(JSON.stringify(messages.map((m) => (m.tag === 'message' ? m.content.toString() : '')))).not.toContain('rolled-back');
  });
});

describe('message content format v1', () => {
  it('parses what outbox_tail.emit() wrote: envelope fields, string headers only, the payload as jsonb text', () => {
    const emitted = decodeAll('row_then_emit_then_raw_message_one_txn')[3] as Of<'message'>;
    const { envelope, payload } = parsed(emitted.content);
    expect(envelope).toMatchObject({ aggregateType: 'order', aggregateId: 'o-1', eventType: 'paid', headers: { trace: 't-1' } });
    expect(envelope.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(envelope.createdAt).toMatch(/^2026-12-01T17:16:44\.\d+\+00:00$/);
    // jsonb normalised the writer's text (key order, spacing) and kept 12.50 and the escaped newline: the table path publishes the same
    expect(payload.toString('utf8')).toBe('{"note": "line\\nbreak ü", "amount": 12.50}');
  });

  it('keeps the payload bytes exactly as given, whitespace and key order included', () => {
    const payload = '{ "b" : 1,\n  "a": [1.0, "ü☕"] }';
    const content = MessageContent.encode(
      { id: 'e1', aggregateType: 'order', aggregateId: 'o-9', eventType: 'created', headers: { h: 'v' }, createdAt: null },
      payload,
    );
    const result = parsed(content);
    expect(result.payload.equals(Buffer.from(payload, 'utf8'))).toBe(true);
    expect(result.envelope).toEqual({ id: 'e1', aggregateType: 'order', aggregateId: 'o-9', eventType: 'created', headers: { h: 'v' }, createdAt: null });
    // One line of envelope: a newline inside a field is escaped by JSON, so the first LF ends it.
    const tricky = MessageContent.encode({ id: 'e2', aggregateType: 'a\nb', aggregateId: 'k', eventType: 't', headers: {}, createdAt: null }, '{}');
    expect(parsed(tricky).envelope.aggregateType).toBe('a\nb');
  });

  it.each([
    ['{"v":1,"id":"x"}', 'x', 'no newline after the envelope'],
    ['ping', null, 'no newline after the envelope'],
    ['not json\n{}', null, 'envelope is not valid JSON'],
    ['[1]\n{}', null, 'envelope is not a JSON object'],
    ['{"v":2,"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n{}', 'x', 'unsupported content version 2 (this relay reads 1)'],
    ['{"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n{}', 'x', 'unsupported content version undefined (this relay reads 1)'],
    ['{"v":1,"id":"x","aggregate_type":"a","event_type":""}\n{}', 'x', 'field(s) aggregate_id, event_type missing or not a non-empty string'],
    ['{"v":1,"aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n{}', null, 'field(s) id missing or not a non-empty string'],
    ['{"v":1,"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c","headers":[1]}\n{}', 'x', 'headers must be a JSON object, got an array'],
    ['{"v":1,"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c","created_at":5}\n{}', 'x', 'created_at must be a string'],
    ['{"v":1,"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n{nope', 'x', 'payload is not valid JSON'],
    ['{"v":1,"id":"x","aggregate_type":"a","aggregate_id":"b","event_type":"c"}\n', 'x', 'payload is not valid JSON'],
  ])('refuses %j, naming the id when readable', (content, id, reason) => {
    expect(unparsable(content)).toEqual({ id, reason });
  });

  it('writeOutboxEvent({ via: "message" }) emits a transactional message as bytea with the default prefix, and refuses a payload that is not JSON', () => {
    const { sql, values, id } = buildOutboxMessage({ id: 'e7', aggregateType: 'order', aggregateId: 'o-1', eventType: 'created', payload: '{"a" :1}' });
    expect(sql).toBe('select pg_logical_emit_message(true, $1::text, $2::bytea)');
    expect(values[0]).toBe('outbox-tail');
    expect(id).toBe('e7');
    expect(parsed(values[1] as Buffer).payload.toString()).toBe('{"a" :1}');
    expect(buildOutboxMessage({ aggregateType: 'a', aggregateId: 'b', eventType: 'c', payload: { x: 1 } }, { messagePrefix: 'p' }).values[0]).toBe('p');
    expect(() => buildOutboxMessage({ aggregateType: 'a', aggregateId: 'b', eventType: 'c', payload: 'nope' })).toThrow(/payload must be JSON text/);
  });
});

describe('TransactionAssembler with --source messages|both', () => {
  it('both: a table row and the messages of one transaction become events in stream order, confirmed at the one commit end LSN', () => {
    const { log, items, commits } = assemble(['row_then_emit_then_raw_message_one_txn'], 'both');
    expect(log).toEqual(['begin 1', 'event created', 'event paid', 'event shipped', 'commit 1']);
    expect(commits[0]!.endLsn).toBe(Lsn.parse('0/152F630'));
    for (const item of items) expect(eventOf(item).txn).toBe(commits[0]);
    expect(eventOf(items[2])).toMatchObject({ id: '00000000-0000-0000-0000-000000000003', table: 'outbox-tail', createdAt: null, headers: {} });
    expect(eventOf(items[2]).payload.toString()).toBe('{ "kept" :  "as written" }');
  });

  it('messages: table rows are not read; table (the default): messages are not read', () => {
    expect(assemble(['row_then_emit_then_raw_message_one_txn'], 'messages').log).toEqual(['begin 1', 'event paid', 'event shipped', 'commit 1']);
    expect(assemble(['row_then_emit_then_raw_message_one_txn'], 'table').log).toEqual(['begin 1', 'event created', 'commit 1']);
  });

  it('ignores a foreign prefix, and messages of another --message-prefix', () => {
    expect(assemble(['savepoint_rollback_and_foreign_prefix'], 'messages').log).toEqual(['begin 1', 'event created', 'commit 1']);
    expect(assemble(['savepoint_rollback_and_foreign_prefix'], 'messages', 'someone-else').log).toEqual(['begin 1', 'malformed', 'commit 1']);
    expect(assemble(['savepoint_rollback_and_foreign_prefix'], 'messages', 'nobody').log).toEqual(['begin 1', 'commit 1']);
  });

  it('turns a non-transactional message into a transaction of its own holding one malformed item, ending at the message LSN', () => {
    const { log, items, commits } = assemble(['non_transactional_emit_then_txn'], 'messages');
    expect(log).toEqual(['begin 1', 'malformed', 'commit 1', 'begin 2', 'event created', 'commit 2']);
    const row = malformedOf(items[0]);
    expect(row).toMatchObject({
      id: '00000000-0000-0000-0000-000000000004',
      table: 'outbox-tail',
      message: { transactional: false, lsn: Lsn.parse('0/152FAE8') },
    });
    expect(commits[0]!.endLsn).toBe(Lsn.parse('0/152FAE8'));
    // Everything after it starts at or past its end: confirming it never skips the next transaction.
    expect(commits[1]!.commitLsn > commits[0]!.endLsn!).toBe(true);
  });

  it('refuses a transactional message outside Begin..Commit and a non-transactional one inside: the stream is not what pgoutput sends', () => {
    const [nonTxn, begin, txnMessage] = decodeAll('non_transactional_emit_then_txn');
    const make = () =>
      new TransactionAssembler(
        new RowMapper(COLUMNS, 'public.outbox'),
        { begin() {}, item() {}, commit() {} },
        { source: 'messages', messagePrefix: 'outbox-tail' },
      );
    expect(() => make().push(txnMessage!)).toThrow(/transactional message at 0\/152FBF0 outside a transaction/);
    const open = make();
    open.push(begin!);
    expect(() => open.push(nonTxn!)).toThrow(/non-transactional message at 0\/152FAE8 inside xid/);
  });
});

describe('--on-malformed for messages', () => {
  const { items } = assemble(['non_transactional_emit_then_txn'], 'messages');
  const nonTransactional = malformedOf(items[0]);

  it('fail: NON_TRANSACTIONAL_MESSAGE (exit 5, not retriable) names the LSN and the id; a bad content is MALFORMED_MESSAGE', () => {
    const error = malformedRowError(nonTransactional);
    expect(error).toMatchObject({ code: 'NON_TRANSACTIONAL_MESSAGE', retriable: false, exitCode: 5 });
    expect(error.message).toMatch(/LSN 0\/152FAE8 .*id=00000000-0000-0000-0000-000000000004.* is non-transactional/);
    const bad = { ...nonTransactional, reason: 'payload is not valid JSON', message: { ...nonTransactional.message!, transactional: true } };
    expect(malformedRowError(bad)).toMatchObject({ code: 'MALFORMED_MESSAGE', retriable: false, exitCode: 5 });
    expect(malformedRowError(bad).message).toMatch(/LSN 0\/152FAE8 .* is malformed: payload is not valid JSON/);
  });

  it('dead-letter: a pointer record with the message LSN and prefix, never the content', () => {
    const policies = badRowPolicies({ onOversize: 'fail', onMalformed: 'dead-letter', deadLetterTopic: 'dlq' });
    const record = malformedRowRecord(nonTransactional, policies.malformed, new RecordBuilder('outbox.event.{aggregate_type}'))!;
    expect(record.topic).toBe('dlq');
    expect(JSON.parse(record.value.toString())).toMatchObject({
      id: '00000000-0000-0000-0000-000000000004',
      message_lsn: '0/152FAE8',
      message_prefix: 'outbox-tail',
      transactional: false,
    });
    expect(record.value.toString()).not.toContain('"o-4"');
  });
});

describe('config: --source, --message-prefix, --heartbeat-interval-ms', () => {
  it('defaults to the table, prefix outbox-tail, no heartbeat; refuses another source', () => {
    expect(configSchema.parse({})).toMatchObject({ source: 'table', messagePrefix: 'outbox-tail', heartbeatIntervalMs: 0 });
    expect(configSchema.parse({ source: 'messages', messagePrefix: 'app', heartbeatIntervalMs: '5000' })).toMatchObject({
      source: 'messages',
      messagePrefix: 'app',
      heartbeatIntervalMs: 5000,
    });
    expect(configSchema.safeParse({ source: 'wal' }).success).toBe(false);
  });

  it('heartbeats use a prefix of their own, so the assembler can never take one for an event', () => {
    expect(heartbeatPrefix('outbox-tail')).toBe('outbox-tail-heartbeat');
    expect(heartbeatPrefix('app')).not.toBe('app');
  });
});
