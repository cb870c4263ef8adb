import { describe, expect, it } from 'vitest';
import type { MalformedRow } from '../../../../src/pipeline/outbox-event.js';
import { shouldPause, shouldResume } from '../../../../src/pipeline/publish/backpressure.js';
import { badRowPolicies } from '../../../../src/pipeline/publish/bad-row-policy.js';
import { nextBatchSize, shouldWaitForFullerBatch, type Batchable } from '../../../../src/pipeline/publish/batching.js';
import { malformedRowError, malformedRowRecord } from '../../../../src/pipeline/publish/malformed-policy.js';
import { oversizeDecision, oversizeError } from '../../../../src/pipeline/publish/oversize-policy.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';

const queue = (entries: Batchable[]) => ({ length: entries.length, peek: (i: number) => entries[i] });
const sized = (...bytes: number[]): Batchable[] => bytes.map((b) => ({ bytes: b, record: {} }));
const limits = { batchMaxMessages: 3, batchMaxBytes: 100 };

describe('batching', () => {
  it('takes up to batchMaxMessages entries', () => {
    expect(nextBatchSize(queue(sized(1, 1, 1, 1, 1)), limits)).toBe(3);
    expect(nextBatchSize(queue(sized(1, 1)), limits)).toBe(2);
    expect(nextBatchSize(queue([]), limits)).toBe(0);
  });

  it('stops before the entry that would pass batchMaxBytes, but sends a lone oversized one', () => {
    expect(nextBatchSize(queue(sized(60, 40, 1)), limits)).toBe(2); // exactly 100 fits
    expect(nextBatchSize(queue(sized(60, 41)), limits)).toBe(1);
    expect(nextBatchSize(queue(sized(500, 1)), limits)).toBe(1);
  });

  it('never takes an entry that cannot be sent, nor anything after it', () => {
    const halt: Batchable = { bytes: 0, record: null };
    expect(nextBatchSize(queue([...sized(1, 1), halt, ...sized(1)]), limits)).toBe(2);
    expect(nextBatchSize(queue([halt, ...sized(1)]), limits)).toBe(0);
  });

  it('waits for a fuller batch only with batchMaxWaitMs, not while draining, not when full', () => {
    const wait = { batchMaxMessages: 3, batchMaxWaitMs: 5 };
    expect(shouldWaitForFullerBatch(2, false, wait)).toBe(true);
    expect(shouldWaitForFullerBatch(3, false, wait)).toBe(false);
    expect(shouldWaitForFullerBatch(2, true, wait)).toBe(false);
    expect(shouldWaitForFullerBatch(2, false, { ...wait, batchMaxWaitMs: 0 })).toBe(false);
  });
});

describe('backpressure', () => {
  const inFlight = { maxInFlightMessages: 10, maxInFlightBytes: 1000 };

  it('pauses when either limit is reached', () => {
    expect(shouldPause({ messages: 9, bytes: 999 }, inFlight)).toBe(false);
    expect(shouldPause({ messages: 10, bytes: 0 }, inFlight)).toBe(true);
    expect(shouldPause({ messages: 0, bytes: 1000 }, inFlight)).toBe(true);
  });

  it('resumes only when both are under half', () => {
    expect(shouldResume({ messages: 4, bytes: 499 }, inFlight)).toBe(true);
    expect(shouldResume({ messages: 5, bytes: 0 }, inFlight)).toBe(false);
    expect(shouldResume({ messages: 0, bytes: 500 }, inFlight)).toBe(false);
  });
});

describe('bad-row policies', () => {
  const txn = { seq: 1, xid: 9, commitLsn: Lsn.parse('0/1925E80'), commitTime: 0n, endLsn: null };
  const row: MalformedRow = { id: 'r1', reason: 'column(s) payload NULL', table: 'public.outbox', txn };

  it('resolves the dead-letter topic once, and refuses dead-letter without one', () => {
    expect(badRowPolicies({ onOversize: 'fail', onMalformed: 'dead-letter', deadLetterTopic: 'dlq' })).toEqual({
      oversize: { action: 'fail' },
      malformed: { action: 'dead-letter', topic: 'dlq' },
    });
    expect(() => badRowPolicies({ onOversize: 'dead-letter', onMalformed: 'fail' })).toThrow(/--on-oversize=dead-letter needs --dead-letter-topic/);
  });

  it('refuses dead-letter without a topic as a config error (exit 2) that names the option, for either policy', () => {
    const refusal = (config: Parameters<typeof badRowPolicies>[0]) => {
      try {
        badRowPolicies(config);
      } catch (error) {
        return error;
      }
      throw new Error('accepted');
    };
    expect(refusal({ onOversize: 'dead-letter', onMalformed: 'fail' })).toMatchObject({
      code: 'CONFIG_INVALID',
      exitCode: 2,
      message: '--on-oversize=dead-letter needs --dead-letter-topic',
    });
    expect(refusal({ onOversize: 'fail', onMalformed: 'dead-letter', deadLetterTopic: '' })).toMatchObject({
      code: 'CONFIG_INVALID',
      exitCode: 2,
      message: '--on-malformed=dead-letter needs --dead-letter-topic',
    });
  });

  it('halts on a malformed row without a readable id naming it "(unreadable)", and says how to go on', () => {
    const error = malformedRowError({ ...row, id: null });
    expect(error.message).toBe(
      'outbox row id=(unreadable) in public.outbox is malformed: column(s) payload NULL (commit LSN 0/1925E80); the slot is not confirmed past it',
    );
    expect(error.hint).toBe('fix the row or the --column-* mapping, or run with --on-malformed=dead-letter --dead-letter-topic=<topic>');
  });

  it('halts on a logical decoding message with the fix for its kind: transactional writes for a non-transactional one, the writer for a bad content', () => {
    const message = { prefix: 'outbox-tail', lsn: Lsn.of(0x152fae8n), transactional: false };
    const lone = malformedRowError({ ...row, id: null, reason: 'non-transactional message', table: 'outbox-tail', message });
    expect(lone.message).toBe(
      'logical decoding message at LSN 0/152FAE8 (prefix outbox-tail, id=(unreadable)) is non-transactional: non-transactional message; it is not published and the slot is not confirmed past it',
    );
    expect(lone.hint).toBe(
      'write events with pg_logical_emit_message(true, ...) (outbox_tail.emit does); to get past this one, run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
    );
    const bad = malformedRowError({ ...row, reason: 'payload is not valid JSON', table: 'outbox-tail', message: { ...message, transactional: true } });
    expect(bad.hint).toBe(
      'fix the writer (docs/table-less-source.md, "Message content format"), or run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
    );
  });

  it('a malformed row becomes a dead-letter pointer, or null (halt) under fail', () => {
    const builder = new RecordBuilder('t');
    expect(malformedRowRecord(row, { action: 'fail' }, builder)).toBeNull();
    const pointer = malformedRowRecord(row, { action: 'dead-letter', topic: 'dlq' }, builder)!;
    expect(pointer).toMatchObject({ topic: 'dlq', key: 'r1', headers: { reason: 'malformed: column(s) payload NULL', id: 'r1', commit_lsn: '0/1925E80' } });
    expect(malformedRowError(row)).toMatchObject({ code: 'MALFORMED_ROW', retriable: false, exitCode: 5 });
    expect(malformedRowError(row).message).toMatch(/id=r1 in public.outbox is malformed: column\(s\) payload NULL \(commit LSN 0\/1925E80\)/);
  });

  it('an oversized event is dead-lettered under that policy; a pointer or `fail` halts', () => {
    expect(oversizeDecision({ action: 'dead-letter', topic: 'dlq' }, true)).toEqual({ action: 'dead-letter', topic: 'dlq' });
    expect(oversizeDecision({ action: 'dead-letter', topic: 'dlq' }, false)).toEqual({ action: 'halt' });
    expect(oversizeDecision({ action: 'fail' }, true)).toEqual({ action: 'halt' });
    const error = oversizeError({ id: 'e1', bytes: 2_000_000, topic: 'outbox.event.order', txn }, new Error('too large'));
    expect(error).toMatchObject({ code: 'MESSAGE_TOO_LARGE', retriable: false, exitCode: 5 });
    expect(error.message).toBe(
      'outbox row id=e1 (2000000 bytes, topic outbox.event.order, commit LSN 0/1925E80) is larger than Kafka accepts; the slot is not confirmed past it',
    );
    expect(error.hint).toBe("raise the broker's or topic's max.message.bytes, or run with --on-oversize=dead-letter --dead-letter-topic=<topic>");
    expect(error.cause).toEqual(new Error('too large'));
  });
});
