import { describe, expect, it } from 'vitest';
import { Lsn } from '../../../../src/shared/lsn.js';
import { decodePgoutput, type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { decodeScenario, loadRecorded } from '../../../support/pgoutput-fixtures.js';

const fixtures = loadRecorded('pgoutput-recorded');
const decode = (name: string): PgoutputMessage[] => decodeScenario(fixtures, name);

describe('pgoutput decoder on recorded PostgreSQL 15 bytes', () => {
  it('decodes Begin, Relation, two Inserts and Commit of one transaction', () => {
    const messages = decode('two_inserts_one_txn');
    expect(messages.map((m) => m.tag)).toEqual(['begin', 'relation', 'insert', 'insert', 'commit']);
    const [begin, relation, first, second, commit] = messages as [
      Extract<PgoutputMessage, { tag: 'begin' }>,
      Extract<PgoutputMessage, { tag: 'relation' }>,
      Extract<PgoutputMessage, { tag: 'insert' }>,
      Extract<PgoutputMessage, { tag: 'insert' }>,
      Extract<PgoutputMessage, { tag: 'commit' }>,
    ];
    expect(relation.schema).toBe('public');
    expect(relation.name).toBe('outbox');
    expect(relation.columns.map((c) => c.name)).toEqual(['id', 'aggregate_type', 'aggregate_id', 'event_type', 'payload', 'headers', 'created_at']);
    expect(relation.columns[0]).toMatchObject({ isKey: true, typeOid: 2950 });
    expect(relation.columns[4]).toMatchObject({ isKey: false, typeOid: 3802 });
    expect(first.relationId).toBe(relation.relationId);
    expect(first.values[0]!.toString()).toBe('7c9e6679-7425-40de-944b-e07fc1f90ae7');
    // jsonb text as PostgreSQL normalised it, bytes untouched (UTF-8 kept)
    expect(first.values[4]!.toString('utf8')).toBe('{"note": "café ☕", "total": 12.5}');
    expect(second.values[5]).toBeNull();
    // Commit carries the same commit LSN Begin announced; the end LSN is the recorded XLogData LSN of the Commit
    expect(commit.commitLsn).toBe(begin.finalLsn);
    expect(commit.endLsn).toBe(Lsn.parse(fixtures.two_inserts_one_txn![4]!.lsn));
    expect(commit.endLsn > commit.commitLsn).toBe(true);
  });

  it('decodes a Relation re-sent after ALTER TABLE and a transactional logical message', () => {
    const messages = decode('alter_table_then_insert_with_message');
    expect(messages.map((m) => m.tag)).toEqual(['begin', 'relation', 'insert', 'message', 'commit']);
    const relation = messages[1] as Extract<PgoutputMessage, { tag: 'relation' }>;
    expect(relation.columns.map((c) => c.name)).toContain('tenant');
    const message = messages[3] as Extract<PgoutputMessage, { tag: 'message' }>;
    expect(message).toMatchObject({ transactional: true, prefix: 'outbox-tail' });
    expect(message.content.toString()).toBe('hello');
  });

  it('copies column values out of the input buffer, which the driver reuses', () => {
    const input = Buffer.from(fixtures.two_inserts_one_txn![2]!.hex, 'hex');
    const insert = decodePgoutput(input) as Extract<PgoutputMessage, { tag: 'insert' }>;
    input.fill(0);
    expect(insert.values[1]!.toString()).toBe('order');
  });

  it('rejects truncated and unknown messages with a protocol error', () => {
    const commit = Buffer.from(fixtures.two_inserts_one_txn![4]!.hex, 'hex');
    expect(() => decodePgoutput(commit.subarray(0, 10))).toThrow(/truncated pgoutput message/);
    expect(() => decodePgoutput(Buffer.from('5a00', 'hex'))).toThrow(/unknown pgoutput message type 0x5a/);
  });
});
