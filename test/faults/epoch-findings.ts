/**
 * What the late-request scenarios (late-requests.ts) check on the wire: after
 * an indefinite error, a new producer epoch before anything else was sent.
 */
import { API } from './kafka-frames.js';
import type { RequestRecord } from './tcp-proxy.js';

export interface EpochFinding {
  transactionalId: string;
  /** The highest epoch this transactional id used before the failure. */
  failedEpoch: number;
  /** The epoch InitProducerId handed out after the failure (null: none seen). */
  nextEpoch: number | null;
  /** Requests after the failure (other than aborting the failed transaction) in an epoch <= failedEpoch, or before the InitProducerId. */
  staleRequests: number;
}

/**
 * The wire evidence of the defence: for every transactional id that sent a
 * request before the failure at `failedAt`, the next InitProducerId answered
 * with a higher epoch, and nothing of that id was sent after the failure in an
 * older epoch or before that InitProducerId (aborting the failed transaction
 * in its own epoch excepted: it ends it, it does not go on).
 */
export function epochFindings(requests: readonly RequestRecord[], heldFrom: number, failedAt: number): EpochFinding[] {
  const ids = new Set<string>();
  for (const r of requests)
    if (r.at >= heldFrom && r.at <= failedAt && r.producer?.transactionalId && r.apiKey !== API.InitProducerId) ids.add(r.producer.transactionalId);
  const findings: EpochFinding[] = [];
  for (const id of ids) {
    const mine = requests.filter((r) => r.producer?.transactionalId === id);
    const before = mine.filter((r) => r.at <= failedAt && r.apiKey !== API.InitProducerId);
    const failedEpoch = Math.max(...before.map((r) => r.producer!.producerEpoch));
    const after = mine.filter((r) => r.at > failedAt && r.verdict !== 'hold');
    // The first one answered without error (the coordinator answers CONCURRENT_TRANSACTIONS while it aborts the failed transaction, and kafkajs asks again).
    const init = after.find((r) => r.apiKey === API.InitProducerId && r.errorCode === 0 && r.assigned);
    const nextEpoch = init?.assigned?.producerEpoch ?? null;
    let staleRequests = 0;
    for (const r of after) {
      if (r.apiKey === API.InitProducerId) continue;
      const abortingTheFailedOne = r.apiKey === API.EndTxn && r.producer!.committed === false && r.producer!.producerEpoch === failedEpoch;
      if (abortingTheFailedOne) continue;
      if (!init || r.at < init.at || r.producer!.producerEpoch <= failedEpoch) staleRequests++;
    }
    findings.push({ transactionalId: id, failedEpoch, nextEpoch, staleRequests });
  }
  return findings;
}
