import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { Lsn } from '../../shared/lsn.js';

/**
 * Pure decoder for pgoutput protocol version 1 (non-streaming), the payload of
 * an XLogData message. Written here rather than using pg-logical-replication's
 * parser because that one converts column text through pg type parsers
 * (jsonb -> object), and we must forward the payload byte-for-byte as
 * PostgreSQL sent it.
 *
 * Column values are copied out of the input: the pg driver reuses its socket
 * buffer, so a view would be overwritten by the next read.
 */

/** `null` = SQL NULL, `undefined` = unchanged TOASTed value (never in INSERTs). */
export type ColumnValue = Buffer | null | undefined;

export interface RelationColumn {
  name: string;
  typeOid: number;
  typeMod: number;
  isKey: boolean;
}

export type PgoutputMessage =
  | { tag: 'begin'; finalLsn: Lsn; commitTime: bigint; xid: number }
  | { tag: 'commit'; flags: number; commitLsn: Lsn; endLsn: Lsn; commitTime: bigint }
  | { tag: 'origin'; originLsn: Lsn; name: string }
  | { tag: 'relation'; relationId: number; schema: string; name: string; replicaIdentity: string; columns: RelationColumn[] }
  | { tag: 'type'; typeOid: number; schema: string; name: string }
  | { tag: 'insert'; relationId: number; values: ColumnValue[] }
  | { tag: 'update'; relationId: number; values: ColumnValue[] }
  | { tag: 'delete'; relationId: number }
  | { tag: 'truncate'; relationIds: number[] }
  | { tag: 'message'; transactional: boolean; lsn: Lsn; prefix: string; content: Buffer };

class Reader {
  offset = 0;
  constructor(private readonly buffer: Buffer) {}

  private need(bytes: number): void {
    if (this.offset + bytes > this.buffer.length) {
      throw new OutboxTailError(
        'PROTOCOL_ERROR',
        `truncated pgoutput message: need ${bytes} bytes at offset ${this.offset}, have ${this.buffer.length - this.offset}`,
      );
    }
  }
  u8(): number {
    this.need(1);
    return this.buffer[this.offset++]!;
  }
  i16(): number {
    this.need(2);
    const v = this.buffer.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.buffer.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  i64(): bigint {
    this.need(8);
    const v = this.buffer.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }
  lsn(): Lsn {
    this.need(8);
    const v = Lsn.read(this.buffer, this.offset);
    this.offset += 8;
    return v;
  }
  /** A length or count the message declares: a negative one is malformed, and allocating it would throw a RangeError (retried forever). */
  private nonNegative(value: number, kind: 'length' | 'count', at: number): number {
    if (value < 0) throw new OutboxTailError('PROTOCOL_ERROR', `negative ${kind} ${value} at offset ${at}`);
    return value;
  }
  length32(): number {
    const at = this.offset;
    return this.nonNegative(this.i32(), 'length', at);
  }
  count16(): number {
    const at = this.offset;
    return this.nonNegative(this.i16(), 'count', at);
  }
  count32(): number {
    const at = this.offset;
    return this.nonNegative(this.i32(), 'count', at);
  }
  cstring(): string {
    const end = this.buffer.indexOf(0, this.offset);
    if (end < 0) throw new OutboxTailError('PROTOCOL_ERROR', `unterminated string at offset ${this.offset}`);
    const s = this.buffer.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return s;
  }
  bytes(length: number): Buffer {
    this.need(length);
    // Copy: see the module comment about buffer reuse.
    const out = Buffer.allocUnsafe(length);
    this.buffer.copy(out, 0, this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  tuple(): ColumnValue[] {
    const count = this.count16();
    const values: ColumnValue[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const kind = this.u8();
      switch (kind) {
        case 0x6e: // 'n'
          values[i] = null;
          break;
        case 0x75: // 'u'
          values[i] = undefined;
          break;
        case 0x74: // 't'
        case 0x62: // 'b'
          values[i] = this.bytes(this.length32());
          break;
        default:
          throw new OutboxTailError('PROTOCOL_ERROR', `unknown tuple column kind 0x${kind.toString(16)} at offset ${this.offset - 1}`);
      }
    }
    return values;
  }
}

export function decodePgoutput(buffer: Buffer): PgoutputMessage {
  const r = new Reader(buffer);
  const tag = r.u8();
  switch (tag) {
    case 0x42: // 'B'
      return { tag: 'begin', finalLsn: r.lsn(), commitTime: r.i64(), xid: r.u32() };
    case 0x43: // 'C'
      return { tag: 'commit', flags: r.u8(), commitLsn: r.lsn(), endLsn: r.lsn(), commitTime: r.i64() };
    case 0x4f: // 'O'
      return { tag: 'origin', originLsn: r.lsn(), name: r.cstring() };
    case 0x52: {
      // 'R'
      const relationId = r.u32();
      const schema = r.cstring();
      const name = r.cstring();
      const replicaIdentity = String.fromCharCode(r.u8());
      const count = r.count16();
      const columns: RelationColumn[] = [];
      for (let i = 0; i < count; i++) {
        const flags = r.u8();
        columns.push({ isKey: (flags & 1) === 1, name: r.cstring(), typeOid: r.u32(), typeMod: r.i32() });
      }
      return { tag: 'relation', relationId, schema, name, replicaIdentity, columns };
    }
    case 0x59: // 'Y'
      return { tag: 'type', typeOid: r.u32(), schema: r.cstring(), name: r.cstring() };
    case 0x49: {
      // 'I'
      const relationId = r.u32();
      const marker = r.u8();
      if (marker !== 0x4e) throw new OutboxTailError('PROTOCOL_ERROR', `insert without new tuple (marker 0x${marker.toString(16)})`);
      return { tag: 'insert', relationId, values: r.tuple() };
    }
    case 0x55: {
      // 'U'
      const relationId = r.u32();
      let marker = r.u8();
      if (marker === 0x4b || marker === 0x4f) {
        r.tuple();
        marker = r.u8();
      }
      if (marker !== 0x4e) throw new OutboxTailError('PROTOCOL_ERROR', `update without new tuple (marker 0x${marker.toString(16)})`);
      return { tag: 'update', relationId, values: r.tuple() };
    }
    case 0x44: // 'D'
      return { tag: 'delete', relationId: r.u32() };
    case 0x54: {
      // 'T'
      const count = r.count32();
      r.u8();
      const relationIds: number[] = [];
      for (let i = 0; i < count; i++) relationIds.push(r.u32());
      return { tag: 'truncate', relationIds };
    }
    case 0x4d: {
      // 'M'
      const flags = r.u8();
      const lsn = r.lsn();
      const prefix = r.cstring();
      const content = r.bytes(r.length32());
      return { tag: 'message', transactional: (flags & 1) === 1, lsn, prefix, content };
    }
    default:
      throw new OutboxTailError('PROTOCOL_ERROR', `unknown pgoutput message type 0x${tag.toString(16)} ('${String.fromCharCode(tag)}')`, {
        hint: 'outbox-tail speaks pgoutput protocol version 1 without streaming; check the slot uses the pgoutput plugin',
      });
  }
}
