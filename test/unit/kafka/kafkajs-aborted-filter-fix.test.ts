import { describe, expect, it } from 'vitest';
import { markAbortedRecords } from '../../../src/kafka/kafkajs/kafkajs-aborted-filter-fix.js';

const ABORT = Buffer.from([0, 0, 0, 0]);
const COMMIT = Buffer.from([0, 0, 0, 1]);
const record = (offset: number, producerId: string, key = `r${offset}`) => ({
  offset: String(offset),
  key: Buffer.from(key),
  isControlRecord: false,
  batchContext: { producerId, inTransaction: true },
});
const marker = (offset: number, producerId: string, key: Buffer) => ({
  offset: String(offset),
  key,
  isControlRecord: true,
  batchContext: { producerId, inTransaction: true },
});
/** What kafkajs hands out: everything that is not (now) a control record. */
const handedOut = (messages: Array<{ key: Buffer; isControlRecord: boolean }>) => messages.filter((m) => !m.isControlRecord).map((m) => m.key.toString());

describe('markAbortedRecords: the read_committed decision of a fetch response', () => {
  it('drops the records of two producers whose aborted transactions both began before the fetch offset', () => {
    const partition = {
      abortedTransactions: [
        { producerId: '1', firstOffset: '0' },
        { producerId: '2', firstOffset: '1' },
      ],
      messages: [record(3, '2'), marker(4, '1', ABORT), marker(5, '2', ABORT), record(6, '1', 'c'), marker(7, '1', COMMIT)],
    };
    expect(markAbortedRecords(partition)).toBe(1);
    expect(handedOut(partition.messages)).toEqual(['c']);
    expect(partition.abortedTransactions).toEqual([]);
  });

  it('orders the aborted transactions by first offset, whatever order the broker lists them in', () => {
    const partition = {
      abortedTransactions: [
        { producerId: '2', firstOffset: '1' },
        { producerId: '1', firstOffset: '0' },
      ],
      messages: [record(0, '1'), record(1, '2'), record(2, '1'), record(3, '2'), marker(4, '2', ABORT), marker(5, '1', ABORT), record(6, '1', 'c')],
    };
    expect(markAbortedRecords(partition)).toBe(4);
    expect(handedOut(partition.messages)).toEqual(['c']);
  });

  it('keeps a producer’s committed transaction after its aborted one, and a non-transactional record of an aborted producer id', () => {
    const plain = { ...record(2, '1', 'plain'), batchContext: { producerId: '1', inTransaction: false } };
    const partition = {
      abortedTransactions: [{ producerId: '1', firstOffset: '0' }],
      messages: [record(0, '1'), marker(1, '1', ABORT), plain, record(3, '1', 'next'), marker(4, '1', COMMIT)],
    };
    markAbortedRecords(partition);
    expect(handedOut(partition.messages)).toEqual(['plain', 'next']);
  });

  it('changes nothing in a response without aborted transactions', () => {
    const partition = { abortedTransactions: [], messages: [record(0, '1'), marker(1, '1', COMMIT)] };
    expect(markAbortedRecords(partition)).toBe(0);
    expect(handedOut(partition.messages)).toEqual(['r0']);
  });
});
