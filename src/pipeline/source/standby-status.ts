import type { Lsn } from '../../shared/lsn.js';
import { PgTimestamp } from '../../postgres/pg-timestamp.js';

/**
 * Encodes a Standby Status Update ('r') carrying exactly `lsn` as written,
 * flushed and applied position. We write it ourselves because
 * pg-logical-replication's acknowledge() sends lsn + 1 (docs/architecture.md#lsn-rules, rule 3),
 * which can skip an adjacent transaction. An LSN of 0 is ignored by the server.
 */
export function encodeStandbyStatus(lsn: Lsn, nowMs: number, replyRequested: boolean): Buffer {
  const buffer = Buffer.alloc(34);
  buffer[0] = 0x72; // 'r'
  buffer.writeBigUInt64BE(lsn, 1);
  buffer.writeBigUInt64BE(lsn, 9);
  buffer.writeBigUInt64BE(lsn, 17);
  buffer.writeBigInt64BE(PgTimestamp.fromUnixMs(nowMs), 25);
  buffer[33] = replyRequested ? 1 : 0;
  return buffer;
}
