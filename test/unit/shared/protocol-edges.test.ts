import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/shared/backoff.js';
import { Lsn } from '../../../src/shared/lsn.js';
import { classifyPgError } from '../../../src/postgres/pg-errors.js';
import { encodeStandbyStatus } from '../../../src/pipeline/source/standby-status.js';
import { classifyKafkaError } from '../../../src/kafka/kafkajs/kafka-errors.js';

describe('standby status update', () => {
  it('carries exactly the given LSN (not +1) as written, flushed and applied', () => {
    const b = encodeStandbyStatus(Lsn.of(0x1925eb0n), Date.UTC(2000, 0, 1, 0, 0, 1), true);
    expect(b[0]).toBe(0x72);
    for (const at of [1, 9, 17]) expect(b.readBigUInt64BE(at)).toBe(0x1925eb0n);
    expect(b.readBigInt64BE(25)).toBe(1_000_000n); // microseconds since 2000-01-01
    expect(b[33]).toBe(1);
  });
});

describe('error classification at the edges', () => {
  it('maps SQLSTATEs to codes, retriability and exit codes', () => {
    expect(classifyPgError({ code: '55006', message: 'replication slot "s" is active for PID 42' }, 'slot s')).toMatchObject({
      code: 'SLOT_ACTIVE',
      retriable: true,
    });
    expect(classifyPgError({ code: '42704', message: 'replication slot "s" does not exist' }, 'slot s')).toMatchObject({
      code: 'SLOT_MISSING',
      retriable: false,
      exitCode: 3,
    });
    expect(classifyPgError({ code: '55000', message: 'can no longer get changes from replication slot "s"' }, 'slot s')).toMatchObject({
      code: 'SLOT_INVALIDATED',
      retriable: false,
      exitCode: 4,
    });
    // PostgreSQL 17.12 / 18.6, START_REPLICATION on a standby's synchronized failover slot (recorded by dev/failover/run-failover.ts): not lost, not promoted yet.
    expect(
      classifyPgError(
        {
          code: '55000',
          message: 'cannot use replication slot "s" for logical decoding',
          detail: 'This replication slot is being synchronized from the primary server.',
        },
        'slot s',
      ),
    ).toMatchObject({ code: 'SERVER_IS_STANDBY', retriable: true });
    expect(classifyPgError({ code: '28P01' }, 'x')).toMatchObject({ code: 'PG_AUTH_FAILED', retriable: false });
    expect(classifyPgError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'x')).toMatchObject({ code: 'PG_UNREACHABLE', retriable: true });
    expect(classifyPgError({ code: '57P01', message: 'terminating connection due to administrator command' }, 'x')).toMatchObject({
      code: 'PG_UNREACHABLE',
      retriable: true,
    });
    // a certificate problem never heals by retrying
    expect(classifyPgError({ code: 'SELF_SIGNED_CERT_IN_CHAIN', message: 'self-signed certificate in certificate chain' }, 'x')).toMatchObject({
      code: 'PG_TLS_FAILED',
      retriable: false,
    });
    expect(classifyPgError({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: "Hostname/IP does not match certificate's altnames" }, 'x')).toMatchObject({
      code: 'PG_TLS_FAILED',
      retriable: false,
    });
  });

  it('maps kafkajs error types, following the cause chain', () => {
    const tooLarge = {
      name: 'KafkaJSNonRetriableError',
      message: 'x',
      cause: { name: 'KafkaJSProtocolError', type: 'MESSAGE_TOO_LARGE', message: 'too large', retriable: false },
    };
    expect(classifyKafkaError(tooLarge, 'publishing')).toMatchObject({ code: 'MESSAGE_TOO_LARGE', retriable: false });
    expect(classifyKafkaError({ name: 'KafkaJSSASLAuthenticationError', message: 'bad password' }, 'connecting')).toMatchObject({
      code: 'KAFKA_AUTH_FAILED',
      retriable: false,
    });
    expect(
      classifyKafkaError({ name: 'KafkaJSNumberOfRetriesExceeded', cause: { name: 'KafkaJSConnectionError', message: 'ECONNREFUSED' } }, 'x'),
    ).toMatchObject({ code: 'KAFKA_UNREACHABLE', retriable: true });
    expect(classifyKafkaError({ name: 'KafkaJSProtocolError', type: 'UNKNOWN_PRODUCER_ID', retriable: false }, 'x')).toMatchObject({
      code: 'KAFKA_ERROR',
      retriable: true,
    });
  });
});

describe('restart backoff', () => {
  it('grows exponentially up to the cap, with jitter in the upper half', () => {
    expect(backoffDelay(1, 500, 30_000, () => 0)).toBe(250);
    expect(backoffDelay(1, 500, 30_000, () => 1)).toBe(500);
    expect(backoffDelay(4, 500, 30_000, () => 1)).toBe(4000);
    expect(backoffDelay(20, 500, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(20, 500, 30_000, () => 0)).toBe(15_000);
  });
});
