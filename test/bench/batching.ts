import type { SinkRecord } from '../../src/sink/sink.js';

/**
 * Cuts records into batches the way RelaySession.takeBatch does for a full
 * queue: at most `maxMessages` records, and no more than `maxBytes` (by
 * SinkRecord.bytes) unless a single record is larger on its own.
 */
export function cutBatches<T extends Pick<SinkRecord, 'bytes'>>(records: readonly T[], maxMessages: number, maxBytes: number): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const r of records) {
    if (batch.length > 0 && (batch.length >= maxMessages || bytes + r.bytes > maxBytes)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(r);
    bytes += r.bytes;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
