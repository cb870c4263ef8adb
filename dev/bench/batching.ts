import { nextBatchSize } from '../../src/pipeline/publish/batching.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';

/**
 * Cuts records into batches the way the relay's publishing stage does for a
 * full queue (the same nextBatchSize): at most `maxMessages` records, and no
 * more than `maxBytes` (by SinkRecord.bytes) unless a single record is larger
 * on its own.
 */
export function cutBatches<T extends Pick<SinkRecord, 'bytes'>>(records: readonly T[], maxMessages: number, maxBytes: number): T[][] {
  const out: T[][] = [];
  const limits = { batchMaxMessages: maxMessages, batchMaxBytes: maxBytes };
  let start = 0;
  const rest = {
    length: 0,
    peek: (i: number) => {
      const record = records[start + i];
      return record && { bytes: record.bytes, record };
    },
  };
  while (start < records.length) {
    rest.length = records.length - start;
    const size = nextBatchSize(rest, limits);
    out.push(records.slice(start, start + size));
    start += size;
  }
  return out;
}
