import { describe, expect, it } from 'vitest';
import { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { decodePgoutput, type PgoutputMessage } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import { decodeScenario, loadRecorded, recordedBytes } from '../../../support/pgoutput-fixtures.js';

// Every message type outbox-tail can meet, on bytes recorded from PostgreSQL 15
// (pgoutput-recorded.json: Begin, Relation, Insert, Message, Commit;
// pgoutput-recorded-more.json, made by record-pgoutput-more.sh: Type, Origin,
// Update, Delete, Truncate, unchanged TOAST, a non-transactional Message).
const recorded = loadRecorded('pgoutput-recorded', 'pgoutput-recorded-more');
const bytes = (scenario: string, index: number) => recordedBytes(recorded, scenario, index);
const decodeAll = (scenario: string): PgoutputMessage[] => decodeScenario(recorded, scenario);
type Of<T extends PgoutputMessage['tag']> = Extract<PgoutputMessage, { tag: T }>;
const text = (v: Buffer | null | undefined) => (v == null ? v : v.toString('utf8'));

/** The error decodePgoutput throws for `input`. */
function failure(input: Buffer): OutboxTailError {
  try {
    decodePgoutput(input);
  } catch (error) {
    expect(OutboxTailError.is(error)).toBe(true);
    return error as OutboxTailError;
  }
  throw new Error('decodePgoutput did not throw');
}

describe('pgoutput decoder: Begin and Commit fields', () => {
  it('reads the commit timestamp and the xid of Begin, and the same timestamp again in Commit', () => {
    const [begin, , , , commit] = decodeAll('two_inserts_one_txn') as [Of<'begin'>, unknown, unknown, unknown, Of<'commit'>];
    expect(begin).toEqual({ tag: 'begin', finalLsn: Lsn.parse('0/1925E80'), commitTime: 849_312_721_977_358n, xid: 727 });
    expect(commit).toEqual({ tag: 'commit', flags: 0, commitLsn: Lsn.parse('0/1925E80'), endLsn: Lsn.parse('0/1925EB0'), commitTime: 849_312_721_977_358n });
    // microseconds since 2000-01-01: the recording's wall clock
    expect(new Date(946_684_800_000 + Number(begin.commitTime / 1000n)).toISOString()).toBe('2026-11-30T00:12:01.977Z');
    const later = decodeAll('alter_table_then_insert_with_message')[0] as Of<'begin'>;
    expect(later.xid).toBe(729);
  });
});

describe('pgoutput decoder: messages the relay skips, decoded all the same', () => {
  it('decodes a Type message, sent before the Relation of a table with a column of a user-defined type', () => {
    const messages = decodeAll('enum_insert_then_update_key_and_delete');
    expect(messages.map((m) => m.tag)).toEqual(['begin', 'type', 'relation', 'insert', 'commit', 'begin', 'update', 'update', 'delete', 'commit']);
    const type = messages[1] as Of<'type'>;
    expect(type).toEqual({ tag: 'type', typeOid: 16385, schema: 'public', name: 'mood' });
    const relation = messages[2] as Of<'relation'>;
    expect(relation).toEqual({
      tag: 'relation',
      relationId: 16389,
      schema: 'public',
      name: 'item',
      replicaIdentity: 'd',
      columns: [
        { isKey: true, name: 'id', typeOid: 23, typeMod: -1 },
        { isKey: false, name: 'name', typeOid: 25, typeMod: -1 },
        { isKey: false, name: 'note', typeOid: 25, typeMod: -1 },
        { isKey: false, name: 'm', typeOid: 16385, typeMod: -1 },
      ],
    });
    const insert = messages[3] as Of<'insert'>;
    expect(insert.values.map(text).map((v) => (v && v.length > 20 ? `${v.length} chars` : v))).toEqual(['1', 'first', '3200 chars', 'calm']);
  });

  it('decodes an Update without old tuple, with an unchanged TOASTed column as undefined (not NULL)', () => {
    const update = decodeAll('enum_insert_then_update_key_and_delete')[6] as Of<'update'>;
    expect(update.relationId).toBe(16389);
    expect(update.values).toHaveLength(4);
    expect(update.values.map(text)).toEqual(['1', 'renamed', undefined, 'calm']);
  });

  it("decodes an Update that changed the key: it skips the old key ('K') and returns the new tuple", () => {
    const update = decodeAll('enum_insert_then_update_key_and_delete')[7] as Of<'update'>;
    expect(update).toEqual({ tag: 'update', relationId: 16389, values: [Buffer.from('2'), Buffer.from('renamed'), undefined, Buffer.from('calm')] });
  });

  it("decodes an Update of a REPLICA IDENTITY FULL table: it skips the old tuple ('O') and returns the new one", () => {
    const messages = decodeAll('replica_identity_full_update_then_truncate');
    const update = messages[3] as Of<'update'>;
    expect(update).toEqual({ tag: 'update', relationId: 16396, values: [Buffer.from('1'), null] });
  });

  it('decodes a Delete and a Truncate of two tables', () => {
    const del = decodeAll('enum_insert_then_update_key_and_delete')[8];
    expect(del).toEqual({ tag: 'delete', relationId: 16389 });
    const messages = decodeAll('replica_identity_full_update_then_truncate');
    expect(messages.map((m) => m.tag)).toEqual(['begin', 'relation', 'insert', 'update', 'type', 'relation', 'relation', 'truncate', 'commit']);
    expect(messages[7]).toEqual({ tag: 'truncate', relationIds: [16389, 16396] });
  });

  it('decodes an Origin message after Begin, and a non-transactional logical message outside any transaction', () => {
    const messages = decodeAll('non_transactional_message_then_origin');
    expect(messages.map((m) => m.tag)).toEqual(['message', 'begin', 'origin', 'relation', 'insert', 'commit']);
    const message = messages[0] as Of<'message'>;
    expect(message).toMatchObject({ tag: 'message', transactional: false, lsn: Lsn.parse('0/1532A08'), prefix: 'outbox-tail' });
    expect(message.content.toString()).toBe('ping');
    expect(messages[2]).toEqual({ tag: 'origin', originLsn: Lsn.parse('0/AB12CD'), name: 'upstream' });
    const transactional = decodeAll('alter_table_then_insert_with_message')[3] as Of<'message'>;
    expect(transactional.transactional).toBe(true);
  });
});

describe('pgoutput decoder: malformed input is a PROTOCOL_ERROR, never a wrong value', () => {
  it('says how many bytes a truncated message lacks', () => {
    const error = failure(bytes('two_inserts_one_txn', 4).subarray(0, 14)); // Commit: flags, commit LSN, then the end LSN from offset 10
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toBe('truncated pgoutput message: need 8 bytes at offset 10, have 4');
    const begin = failure(bytes('two_inserts_one_txn', 0).subarray(0, 12)); // Begin: the commit timestamp from offset 9
    expect(begin.message).toBe('truncated pgoutput message: need 8 bytes at offset 9, have 3');
  });

  it('rejects every recorded message cut short at any byte as a PROTOCOL_ERROR: never a RangeError, never a shorter value', () => {
    let cuts = 0;
    for (const [scenario, messages] of Object.entries(recorded)) {
      if (!Array.isArray(messages)) continue; // the fixtures' _comment
      messages.forEach((_, index) => {
        const whole = bytes(scenario, index);
        // A Delete is read up to its relation id only (it carries no events; its old key is never looked at).
        const read = whole[0] === 0x44 ? 5 : whole.length;
        for (let length = 1; length < read; length++) {
          const error = failure(whole.subarray(0, length));
          expect(error.code, `${scenario}[${index}] cut to ${length} of ${whole.length} bytes`).toBe('PROTOCOL_ERROR');
          expect(error.message).toMatch(/^(truncated pgoutput message: need \d+ bytes at offset \d+, have \d+|unterminated string at offset \d+)$/);
          cuts++;
        }
      });
    }
    expect(cuts).toBeGreaterThan(1000);
  });

  it('rejects a string without its terminating NUL', () => {
    const origin = bytes('non_transactional_message_then_origin', 2);
    const error = failure(origin.subarray(0, origin.length - 1));
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toBe('unterminated string at offset 9');
  });

  it('rejects an unknown tuple column kind, saying where it is', () => {
    const insert = Buffer.from(bytes('replica_identity_full_update_then_truncate', 2)); // I, relid, 'N', 2 columns, 't' at offset 8
    expect(insert[8]).toBe(0x74);
    insert[8] = 0x78; // 'x'
    const error = failure(insert);
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toBe('unknown tuple column kind 0x78 at offset 8');
  });

  it('rejects an Insert or Update whose tuple is not marked new', () => {
    const insert = Buffer.from(bytes('replica_identity_full_update_then_truncate', 2));
    insert[5] = 0x4b; // 'K' where 'N' belongs
    const error = failure(insert);
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toBe('insert without new tuple (marker 0x4b)');
    const update = Buffer.from(bytes('replica_identity_full_update_then_truncate', 3)); // U, relid, 'O' + old tuple, 'N' at offset 20
    expect(update[20]).toBe(0x4e);
    update[20] = 0x58;
    expect(failure(update)).toMatchObject({ code: 'PROTOCOL_ERROR', message: 'update without new tuple (marker 0x58)' });
    const newOnly = Buffer.from(bytes('enum_insert_then_update_key_and_delete', 6));
    newOnly[5] = 0x4a;
    expect(failure(newOnly).message).toBe('update without new tuple (marker 0x4a)');
  });

  it('rejects a negative length or count as a PROTOCOL_ERROR that is not retried, never a RangeError (a restart loop)', () => {
    const insert = Buffer.from(bytes('replica_identity_full_update_then_truncate', 2)); // I, relid, 'N', column count at 6, 't' at 8, its length at 9
    const negativeLength = Buffer.from(insert);
    negativeLength.writeInt32BE(-2, 9);
    const negativeColumns = Buffer.from(insert);
    negativeColumns.writeInt16BE(-1, 6);
    const message = Buffer.from(bytes('alter_table_then_insert_with_message', 3)); // M, flags, LSN, prefix NUL, content length
    expect(message[0]).toBe(0x4d);
    const negativeContent = Buffer.from(message);
    negativeContent.writeInt32BE(-1, message.indexOf(0, 10) + 1);
    const relation = Buffer.from(bytes('two_inserts_one_txn', 1)); // R, relid, schema NUL, name NUL, identity, column count
    expect(relation[0]).toBe(0x52);
    const negativeRelationColumns = Buffer.from(relation);
    negativeRelationColumns.writeInt16BE(-1, relation.indexOf(0, relation.indexOf(0, 5) + 1) + 2);
    const negativeTruncate = Buffer.from('54ffffffff00', 'hex'); // T, relation count -1, options
    for (const [name, input] of Object.entries({ negativeLength, negativeColumns, negativeContent, negativeRelationColumns, negativeTruncate })) {
      const error = failure(input);
      expect(error, name).toMatchObject({ code: 'PROTOCOL_ERROR', retriable: false });
      expect(error.message, name).toMatch(/^negative (length|count) -\d+ at offset \d+$/);
    }
  });

  it('rejects an unknown message type with a hint about the plugin and protocol', () => {
    const error = failure(Buffer.from('5a00', 'hex'));
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toBe("unknown pgoutput message type 0x5a ('Z')");
    expect(error.hint).toBe('outbox-tail speaks pgoutput protocol version 1 without streaming; check the slot uses the pgoutput plugin');
  });
});
