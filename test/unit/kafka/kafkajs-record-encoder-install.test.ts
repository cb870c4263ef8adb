import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { installFastRecordEncoder } from '../../../src/kafka/kafkajs/kafkajs-record-encoder.js';

const require = createRequire(import.meta.url);

describe('installing the kafkajs record encoder', () => {
  it("replaces kafkajs's record and batch encoders before the produce request loads them, once", async () => {
    const originalRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as unknown;
    const batchModule = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: unknown };
    const originalBatch = batchModule.RecordBatch;

    expect(installFastRecordEncoder()).toBe(true);
    expect(require('kafkajs/src/protocol/recordBatch/record/v0/index.js')).not.toBe(originalRecord);
    expect(batchModule.RecordBatch).not.toBe(originalBatch);
    const installedBatch = batchModule.RecordBatch;
    expect(installFastRecordEncoder()).toBe(true);
    expect(batchModule.RecordBatch).toBe(installedBatch);

    // The produce request kafkajs builds now encodes through them, and its bytes carry the record.
    const produce = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (args: object) => { encode(): Promise<{ buffer: Buffer }> };
    const request = produce({
      acks: -1,
      timeout: 30_000,
      topicData: [{ topic: 't', partitions: [{ partition: 0, firstSequence: 0, messages: [{ key: 'k', value: 'the value', headers: { id: 'e-1' } }] }] }],
    });
    const bytes = (await request.encode()).buffer;
    expect(bytes.includes(Buffer.from('the value'))).toBe(true);
    expect(bytes.includes(Buffer.from('e-1'))).toBe(true);
  });
});
