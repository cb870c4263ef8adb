import type { SinkRecord } from '../sink-record.js';

/**
 * Records cross to the sink thread as one buffer that is transferred, not
 * cloned: structured clone would copy every payload's whole backing
 * ArrayBuffer (Buffer pool slabs, the replication chunk a payload was sliced
 * from) and build a graph of small objects on both sides.
 *
 * Layout, little endian: u32 used length, u32 count, then per record: str topic, str key,
 * u32 approximate bytes, u16 header count, (str name, str value) per header,
 * u32 value length, value bytes. str = u32 UTF-8 length + bytes.
 */
export function packRecords(records: readonly SinkRecord[]): ArrayBuffer {
  let capacity = 8;
  for (const r of records) capacity += r.bytes + 64;
  let buf = Buffer.allocUnsafeSlow(capacity);
  let at = 8;
  const ensure = (n: number) => {
    if (at + n <= buf.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, at + n));
    buf.copy(bigger, 0, 0, at);
    buf = bigger;
  };
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  const str = (s: string) => {
    ensure(4 + 3 * s.length);
    const n = buf.write(s, at + 4, 'utf8');
    buf.writeUInt32LE(n, at);
    at += 4 + n;
  };
  buf.writeUInt32LE(records.length, 4);
  for (const r of records) {
    str(r.topic);
    str(r.key);
    ensure(6);
    buf.writeUInt32LE(r.bytes, at);
    const countAt = at + 4;
    at += 6;
    let count = 0;
    for (const name in r.headers) {
      str(name);
      str(r.headers[name]!);
      count++;
    }
    buf.writeUInt16LE(count, countAt);
    ensure(4 + r.value.length);
    buf.writeUInt32LE(r.value.length, at);
    r.value.copy(buf, at + 4);
    at += 4 + r.value.length;
  }
  buf.writeUInt32LE(at, 0);
  // allocUnsafeSlow owns its whole ArrayBuffer (no pool), so it can be transferred as it is.
  return buf.buffer as ArrayBuffer;
}

/** The records of packRecords; values are views into `wire`, not copies. The count comes from the layout, never the caller. */
export function unpackRecords(wire: ArrayBuffer): SinkRecord[] {
  const used = new DataView(wire).getUint32(0, true);
  const buf = Buffer.from(wire, 0, used);
  let at = 4;
  const u32 = () => {
    const v = buf.readUInt32LE(at);
    at += 4;
    return v;
  };
  const str = () => {
    const n = u32();
    const s = buf.toString('utf8', at, at + n);
    at += n;
    return s;
  };
  const count = u32();
  const records: SinkRecord[] = new Array<SinkRecord>(count);
  for (let i = 0; i < count; i++) {
    const topic = str();
    const key = str();
    const bytes = u32();
    const headerCount = buf.readUInt16LE(at);
    at += 2;
    const headers: Record<string, string> = {};
    for (let h = 0; h < headerCount; h++) {
      const name = str();
      headers[name] = str();
    }
    const length = u32();
    const value = buf.subarray(at, at + length);
    at += length;
    records[i] = { topic, key, value, headers, bytes };
  }
  if (at !== buf.length) throw new Error(`record wire: ${buf.length - at} trailing byte(s) after ${count} record(s)`);
  return records;
}
