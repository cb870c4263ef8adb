import { AuthenticationError, MultipleErrors, NetworkError, ProtocolError, ResponseError, TimeoutError } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { classifyPlatformaticError } from '../../../src/sink/platformatic/platformatic-sink.js';

// classifyPlatformaticError decides what the relay does with a failed send on
// --kafka-client platformatic: MESSAGE_TOO_LARGE goes to the --on-oversize
// policy (fail or dead-letter), the rest tear the session down (retriable) or
// halt (auth). Built from the library's own error classes, nested the way its
// producer reports them (a Produce ResponseError inside MultipleErrors).
const PRODUCE = 0;
const produceFailed = (kafkaErrorCode: number, message: string | null = null) =>
  new MultipleErrors('Sending messages failed', [new ResponseError(PRODUCE, 9, { '/topics/0/partitions/0': [kafkaErrorCode, message] }, {})]);

describe('classifyPlatformaticError', () => {
  it('classifies a broker MESSAGE_TOO_LARGE, however deeply nested, as MESSAGE_TOO_LARGE: the oversize policy applies, no retry', () => {
    const error = produceFailed(10, 'the record is too large');
    const e = classifyPlatformaticError(error, 'publishing 1 record(s) to t');
    expect(e).toBeInstanceOf(OutboxTailError);
    expect(e).toMatchObject({ code: 'MESSAGE_TOO_LARGE', retriable: false, cause: error });
    expect(e.hint).toContain('--on-oversize=dead-letter');
    // as a cause of a wrapper, too
    const wrapped = new Error('send failed', { cause: new MultipleErrors('retries exhausted', [new Error('first try'), produceFailed(10)]) });
    expect(classifyPlatformaticError(wrapped, 'x')).toMatchObject({ code: 'MESSAGE_TOO_LARGE', retriable: false });
  });

  it('classifies RECORD_LIST_TOO_LARGE the same way', () => {
    expect(classifyPlatformaticError(produceFailed(18), 'x')).toMatchObject({ code: 'MESSAGE_TOO_LARGE', retriable: false });
    expect(classifyPlatformaticError(new ProtocolError('RECORD_LIST_TOO_LARGE'), 'x')).toMatchObject({ code: 'MESSAGE_TOO_LARGE' });
  });

  it('halts on failed authentication, from the client or from the broker', () => {
    for (const error of [new AuthenticationError('SASL handshake rejected'), new ProtocolError('SASL_AUTHENTICATION_FAILED', 'bad password')]) {
      const e = classifyPlatformaticError(error, 'connecting');
      expect(e).toMatchObject({ code: 'KAFKA_AUTH_FAILED', retriable: false, cause: error });
      expect(e.hint).toBe('check the SASL mechanism, user and password for Kafka');
    }
  });

  it('retries when the brokers cannot be reached or time out', () => {
    for (const error of [
      new NetworkError('Connection to 127.0.0.1:9 failed'),
      new TimeoutError('Request timed out'),
      new MultipleErrors('all brokers', [new NetworkError('ECONNREFUSED')]),
    ]) {
      const e = classifyPlatformaticError(error, 'connecting');
      expect(e).toMatchObject({ code: 'KAFKA_UNREACHABLE', retriable: true, cause: error });
      expect(e.hint).toBe('check --brokers and that the Kafka brokers are up and reachable');
    }
    // the library's code for a timeout today is PLT_KFK_NETWORK; its declared one is PLT_KFK_TIMEOUT
    expect(classifyPlatformaticError({ code: 'PLT_KFK_TIMEOUT', message: 'timeout' }, 'x')).toMatchObject({ code: 'KAFKA_UNREACHABLE', retriable: true });
  });

  it('retries everything else (leader change, fencing, sequence errors): the session replays from the slot', () => {
    for (const error of [produceFailed(6), produceFailed(45), new ProtocolError('INVALID_PRODUCER_EPOCH'), new Error('boom'), 'a string', null]) {
      expect(classifyPlatformaticError(error, 'x')).toMatchObject({ code: 'KAFKA_ERROR', retriable: true });
    }
  });

  it('passes an OutboxTailError through unchanged', () => {
    const ours = new OutboxTailError('KAFKA_ERROR', 'no partition metadata for topic t', { retriable: true });
    expect(classifyPlatformaticError(ours, 'x')).toBe(ours);
  });

  it('puts the context and the leaf errors (API id or code, and message) in the message, at most five', () => {
    const e = classifyPlatformaticError(produceFailed(10, 'too big'), 'publishing 1 record(s) to t');
    expect(e.message).toMatch(/^publishing 1 record\(s\) to t: MESSAGE_TOO_LARGE: /);
    expect(classifyPlatformaticError(new NetworkError('ECONNREFUSED'), 'connecting')).toMatchObject({ message: 'connecting: PLT_KFK_NETWORK: ECONNREFUSED' });
    const many = new MultipleErrors(
      'm',
      Array.from({ length: 8 }, (_, i) => new NetworkError(`n${i}`)),
    );
    expect(classifyPlatformaticError(many, 'c').message).toBe(
      'c: PLT_KFK_NETWORK: n0 <- PLT_KFK_NETWORK: n1 <- PLT_KFK_NETWORK: n2 <- PLT_KFK_NETWORK: n3 <- PLT_KFK_NETWORK: n4',
    );
  });

  it('stops following a cyclic or very deep error tree', () => {
    const cyclic: { code: string; message: string; cause?: unknown } = { code: 'X', message: 'loop' };
    cyclic.cause = { code: 'Y', message: 'back', cause: cyclic };
    expect(classifyPlatformaticError(cyclic, 'x')).toMatchObject({ code: 'KAFKA_ERROR', retriable: true });
    let deep: unknown = { code: 'MESSAGE_TOO_LARGE', message: 'deepest' };
    for (let i = 0; i < 10; i++) deep = { code: 'PLT_KFK_MULTIPLE', message: `level ${i}`, errors: [deep] };
    // too deep to see: a plain, retriable Kafka error rather than a walk without end
    expect(classifyPlatformaticError(deep, 'x')).toMatchObject({ code: 'KAFKA_ERROR', retriable: true });
  });
});
