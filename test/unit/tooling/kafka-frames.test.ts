import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { API, errorName, FrameSplitter, parseRequest, parseResponse, producerFields } from '../../faults/kafka-frames.js';

// The requests exactly as kafkajs 2.2.4 frames them (its own encoders), so the parser reads what the relay sends.
const require = createRequire(import.meta.url);
type Encoded = { buffer: Buffer };
const frame = require('kafkajs/src/protocol/request') as (r: { correlationId: number; clientId: string; request: unknown }) => Promise<Encoded>;
const Long = require('kafkajs/src/utils/long') as { fromString(s: string): unknown };
const produceV7 = require('kafkajs/src/protocol/requests/produce/v7/request') as (a: Record<string, unknown>) => unknown;
const endTxnV1 = require('kafkajs/src/protocol/requests/endTxn/v1/request') as (a: Record<string, unknown>) => unknown;
const addPartitionsV1 = require('kafkajs/src/protocol/requests/addPartitionsToTxn/v1/request') as (a: Record<string, unknown>) => unknown;
const initProducerIdV1 = require('kafkajs/src/protocol/requests/initProducerId/v1/request') as (a: Record<string, unknown>) => unknown;

async function bytes(request: unknown, correlationId: number): Promise<Buffer> {
  return (await frame({ correlationId, clientId: 'outbox-tail', request })).buffer;
}

const produce = () =>
  produceV7({
    acks: -1,
    timeout: 30_000,
    transactionalId: 'outbox-tail-slot',
    producerId: Long.fromString('4242'),
    producerEpoch: 7,
    topicData: [
      {
        topic: 'orders',
        partitions: [
          {
            partition: 2,
            firstSequence: 15,
            messages: [
              { key: 'k', value: 'a' },
              { key: 'k', value: 'b' },
            ],
          },
        ],
      },
    ],
  });

describe('Kafka framing for the late-request nemesis', () => {
  it('splits a byte stream into whole request frames, however the chunks cut it', async () => {
    const a = await bytes(produce(), 1);
    const b = await bytes(endTxnV1({ transactionalId: 't', producerId: Long.fromString('1'), producerEpoch: 0, transactionResult: true }), 2);
    const stream = Buffer.concat([a, b]);
    for (const cut of [1, 3, 4, 5, a.length - 1, a.length, a.length + 2, stream.length - 1]) {
      const s = new FrameSplitter();
      const frames = [...s.push(stream.subarray(0, cut)), ...s.push(stream.subarray(cut))];
      expect(frames.map((f) => parseRequest(f).correlationId)).toEqual([1, 2]);
      expect(Buffer.concat(frames)).toEqual(stream);
      expect(s.pending).toBe(0);
    }
  });

  it('reads the header and the producer id, epoch, sequence and partition of a transactional Produce v7', async () => {
    const f = parseRequest(await bytes(produce(), 99));
    expect({ apiKey: f.apiKey, apiVersion: f.apiVersion, correlationId: f.correlationId, clientId: f.clientId }).toEqual({
      apiKey: API.Produce,
      apiVersion: 7,
      correlationId: 99,
      clientId: 'outbox-tail',
    });
    expect(producerFields(f)).toEqual({
      transactionalId: 'outbox-tail-slot',
      producerId: 4242n,
      producerEpoch: 7,
      baseSequence: 15,
      records: 2,
      topic: 'orders',
      partition: 2,
    });
  });

  it('tells an EndTxn commit from an abort, and reads AddPartitionsToTxn and InitProducerId', async () => {
    const commit = parseRequest(
      await bytes(endTxnV1({ transactionalId: 't', producerId: Long.fromString('5'), producerEpoch: 3, transactionResult: true }), 1),
    );
    const abort = parseRequest(
      await bytes(endTxnV1({ transactionalId: 't', producerId: Long.fromString('5'), producerEpoch: 3, transactionResult: false }), 2),
    );
    expect(producerFields(commit)).toEqual({ transactionalId: 't', producerId: 5n, producerEpoch: 3, committed: true });
    expect(producerFields(abort)?.committed).toBe(false);
    const add = parseRequest(
      await bytes(addPartitionsV1({ transactionalId: 't', producerId: Long.fromString('5'), producerEpoch: 4, topics: [{ topic: 'o', partitions: [0] }] }), 3),
    );
    expect({ apiKey: add.apiKey, ...producerFields(add) }).toEqual({ apiKey: API.AddPartitionsToTxn, transactionalId: 't', producerId: 5n, producerEpoch: 4 });
    const init = parseRequest(await bytes(initProducerIdV1({ transactionalId: 't', transactionTimeout: 60_000 }), 4));
    expect({ apiKey: init.apiKey, transactionalId: producerFields(init)?.transactionalId }).toEqual({ apiKey: API.InitProducerId, transactionalId: 't' });
  });

  it('reads the error code of EndTxn and Produce responses and the epoch InitProducerId hands out', () => {
    const endTxn = Buffer.alloc(14);
    endTxn.writeInt32BE(10, 0);
    endTxn.writeInt32BE(77, 4);
    endTxn.writeInt32BE(0, 8);
    endTxn.writeInt16BE(90, 12);
    expect(parseResponse(endTxn, API.EndTxn, 1)).toEqual({ correlationId: 77, errorCode: 90 });
    expect(errorName(90)).toBe('PRODUCER_FENCED');

    const init = Buffer.alloc(24);
    init.writeInt32BE(20, 0);
    init.writeInt32BE(5, 4);
    init.writeInt32BE(0, 8);
    init.writeInt16BE(0, 12);
    init.writeBigInt64BE(4242n, 14);
    init.writeInt16BE(8, 22);
    expect(parseResponse(init, API.InitProducerId, 1)).toEqual({ correlationId: 5, errorCode: 0, producerId: 4242n, producerEpoch: 8 });

    // Produce v7 response: [topic [partition error base_offset log_append_time log_start_offset]] throttle
    const topic = Buffer.from('orders');
    const p = Buffer.alloc(4 + 4 + 4 + 2 + topic.length + 4 + 4 + 2 + 8 + 8 + 8 + 4);
    let at = 0;
    at = p.writeInt32BE(p.length - 4, at);
    at = p.writeInt32BE(6, at);
    at = p.writeInt32BE(1, at);
    at = p.writeInt16BE(topic.length, at);
    at += topic.copy(p, at);
    at = p.writeInt32BE(1, at);
    at = p.writeInt32BE(2, at);
    at = p.writeInt16BE(47, at);
    p.writeBigInt64BE(123n, at);
    expect(parseResponse(p, API.Produce, 7)).toEqual({ correlationId: 6, errorCode: 47, baseOffset: 123n });
    expect(errorName(47)).toBe('INVALID_PRODUCER_EPOCH');
  });

  it('does not guess at a version it cannot read', () => {
    const f = Buffer.alloc(20);
    f.writeInt32BE(16, 0);
    f.writeInt16BE(API.EndTxn, 4);
    f.writeInt16BE(4, 6); // flexible: not read
    f.writeInt32BE(1, 8);
    f.writeInt16BE(-1, 12);
    expect(producerFields(parseRequest(f))).toBeNull();
    expect(parseResponse(f, API.EndTxn, 4).errorCode).toBeNull();
    expect(() => new FrameSplitter().push(Buffer.from([0xff, 0xff, 0xff, 0xfe]))).toThrow(/negative size/);
  });
});
