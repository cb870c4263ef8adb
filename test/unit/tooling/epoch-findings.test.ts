import { describe, expect, it } from 'vitest';
import { epochFindings } from '../../faults/epoch-findings.js';
import { API } from '../../faults/kafka-frames.js';
import type { RequestRecord } from '../../faults/tcp-proxy.js';

const T = 'outbox-tail-slot';
let correlation = 0;
function req(at: number, apiKey: number, epoch: number, extra: Partial<RequestRecord> = {}, committed?: boolean): RequestRecord {
  return {
    at,
    link: 1,
    apiKey,
    apiVersion: 1,
    correlationId: correlation++,
    producer: { transactionalId: T, producerId: 7n, producerEpoch: epoch, ...(committed !== undefined ? { committed } : {}) },
    verdict: 'pass',
    errorCode: 0,
    ...extra,
  };
}
const init = (at: number, epoch: number, errorCode = 0) =>
  req(at, API.InitProducerId, -1, { errorCode, assigned: { producerId: 7n, producerEpoch: errorCode === 0 ? epoch : -1 } });

describe('epoch evidence of the late-request scenarios', () => {
  it('accepts a relay that aborts in the failed epoch, re-initialises, and sends only in the new epoch', () => {
    const requests = [
      req(100, API.Produce, 0, { verdict: 'hold' }),
      req(200, API.EndTxn, 0, {}, false),
      init(300, 0, 51), // CONCURRENT_TRANSACTIONS, asked again
      init(350, 1),
      req(400, API.AddPartitionsToTxn, 1),
      req(410, API.Produce, 1),
      req(420, API.EndTxn, 1, {}, true),
    ];
    expect(epochFindings(requests, 50, 250)).toEqual([{ transactionalId: T, failedEpoch: 0, nextEpoch: 1, staleRequests: 0 }]);
  });

  it('counts every request of the failed epoch sent after the failure without a new InitProducerId (the same-epoch relay)', () => {
    const requests = [
      req(100, API.Produce, 0, { verdict: 'hold' }),
      req(200, API.EndTxn, 0, {}, false),
      req(400, API.AddPartitionsToTxn, 0),
      req(410, API.Produce, 0),
    ];
    expect(epochFindings(requests, 50, 250)).toEqual([{ transactionalId: T, failedEpoch: 0, nextEpoch: null, staleRequests: 2 }]);
  });

  it('counts a request sent before the InitProducerId answered, and a commit in the failed epoch', () => {
    const requests = [req(100, API.Produce, 0, { verdict: 'hold' }), req(260, API.EndTxn, 0, {}, true), req(280, API.AddPartitionsToTxn, 1), init(300, 1)];
    expect(epochFindings(requests, 50, 250)[0]!.staleRequests).toBe(2);
  });
});
