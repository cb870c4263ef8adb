/**
 * The late-request nemesis (issue 24, docs/late-requests.md): Jepsen's
 * Bufstream analysis showed that, with Kafka's original transaction protocol,
 * a Produce or EndTxn request that reaches the broker after its client timed
 * out and moved on can land in a later transaction. Our defence: never go on
 * in the producer epoch of an indefinite error: the session ends, the next one
 * re-initialises every producer (InitProducerId bumps the epoch), which fences
 * anything late.
 *
 * The Kafka proxy reads Kafka framing (tcp-proxy.ts with kafkaFrames):
 * - produce-held: every Produce request is held (the relay hears nothing)
 *   until the relay gave up and restarted its session; the held ones are then
 *   delivered on a connection of their own right before the relay's next
 *   Produce (after its InitProducerId and AddPartitionsToTxn): the worst
 *   moment for a late request.
 * - endtxn-held: the same with EndTxn (commit) requests (exactly-once only:
 *   at-least-once sends no transactional request).
 * - half-open: from the relay's next Produce on, requests reach the broker
 *   and every response is dropped, until the relay gave up.
 * Each recounted read_committed and read_uncommitted (harness.ts), with the
 * broker's answer to each late request and, on the wire, the producer epoch
 * of every request after the failure.
 */
import { API, apiName, errorName } from './kafka-frames.js';
import { epochFindings, type EpochFinding } from './epoch-findings.js';
import { type RequestRecord } from './tcp-proxy.js';
import { type FaultRun, type FaultVariant, type ScenarioResult } from './harness.js';
import { streamingRelay, warmUp, withRun } from './scenarios.js';
import type { FaultStack } from './fault-stack.js';
import type { RelayProcess } from '../support/relay-process.js';

export type LateKind = 'produce-held' | 'endtxn-held' | 'half-open';

export interface LateRequestOptions {
  fs: FaultStack;
  log: (line: string) => void;
  kind: LateKind;
  delivery: 'at-least-once' | 'exactly-once';
  /** How many times the fault is injected in the one run. */
  rounds?: number;
  variant?: FaultVariant;
}

/** Short, so a held request times out quickly: kafkajs's requestTimeout, and no producer retries at the session level. */
export const LATE_REQUEST_TIMEOUT_MS = 2_000;

export interface LateOutcome {
  api: string;
  transactionalId: string | null;
  producerId: string;
  epoch: number;
  /** EndTxn: commit or abort. */
  committed?: boolean;
  /** What the broker answered the late request. */
  answer: string;
  baseOffset?: string;
}

export interface LateRequestResult extends ScenarioResult {
  late: LateOutcome[];
  epochs: EpochFinding[];
  rounds_run: number;
}

const ERROR_CODES = new Set(['KAFKA_ERROR', 'KAFKA_UNREACHABLE', 'KAFKA_TIMEOUT', 'KAFKA_PRODUCER_FENCED']);

/** Waits for the relay's next `restart` line (the session failed with an indefinite error) after log index `from`; its time. */
async function nextRestart(relay: RelayProcess, from: number, timeoutMs: number): Promise<number> {
  const line = await relay.waitForLog((l) => relay.logs.indexOf(l) >= from && l.event === 'restart', timeoutMs);
  // pino writes the time as an ISO string in the relay's log format.
  const at = typeof line.time === 'number' ? line.time : Date.parse(String(line.time));
  return Number.isFinite(at) ? at : Date.now();
}

function outcome(r: RequestRecord): LateOutcome {
  return {
    api: apiName(r.apiKey),
    transactionalId: r.producer?.transactionalId ?? null,
    producerId: String(r.producer?.producerId ?? '?'),
    epoch: r.producer?.producerEpoch ?? -1,
    ...(r.producer?.committed !== undefined ? { committed: r.producer.committed } : {}),
    answer: errorName(r.errorCode),
    ...(r.baseOffset !== undefined ? { baseOffset: String(r.baseOffset) } : {}),
  };
}

async function oneRound(
  o: LateRequestOptions,
  run: FaultRun,
  relay: RelayProcess,
): Promise<{ late: RequestRecord[]; findings: EpochFinding[]; failedAfterMs: number; recovery: number }> {
  const proxy = o.fs.kafkaProxy;
  const seen = relay.logs.length;
  const heldFrom = Date.now();
  if (o.kind === 'half-open') {
    // From the next Produce on, so the cut finds the relay publishing (not between two lookups of a coordinator).
    proxy.setRequestRule((frame) => {
      if (frame.apiKey === API.Produce) proxy.dropResponses(true);
      return 'pass';
    });
  } else {
    const apiKey = o.kind === 'produce-held' ? API.Produce : API.EndTxn;
    proxy.setRequestRule((frame, producer) => (frame.apiKey === apiKey && (apiKey !== API.EndTxn || producer?.committed === true) ? 'hold' : 'pass'));
  }
  // Held past the request timeout and kafkajs's retries: the relay's session fails.
  const failedAt = await nextRestart(relay, seen, 90_000);
  const restart = relay.logs.slice(seen).find((l) => l.event === 'restart')!;
  run.log(`${o.kind}: the relay gave up (${String(restart.code)}: ${String(restart.err).slice(0, 160)}) after ${((failedAt - heldFrom) / 1000).toFixed(1)} s`);
  run.check(`${o.kind}: the relay ended its session with a Kafka error (${String(restart.code)})`, ERROR_CODES.has(String(restart.code)));
  let late: RequestRecord[] = [];
  if (o.kind === 'half-open') {
    proxy.setRequestRule(null);
    proxy.dropResponses(false);
  } else {
    run.check(`${o.kind}: the proxy held at least one request (${proxy.heldCount})`, proxy.heldCount > 0);
    // The next session's requests pass; the held ones go on just before its first Produce.
    const released = proxy.releaseBefore(API.Produce);
    proxy.setRequestRule(null);
    late = await released;
  }
  // A relay that went on in the failed epoch may never deliver again: the recount says so, after the round's evidence is kept.
  const recovery = o.variant ? 0 : await run.recovered(Date.now());
  return { late, findings: epochFindings(proxy.requests, heldFrom, failedAt), failedAfterMs: failedAt - heldFrom, recovery };
}

export function lateRequestScenario(o: LateRequestOptions): Promise<LateRequestResult> {
  if (o.kind === 'endtxn-held' && o.delivery !== 'exactly-once')
    throw new Error('endtxn-held needs --delivery exactly-once: at-least-once sends no EndTxn (its producer is idempotent, not transactional)');
  if (!o.fs.kafkaProxy.kafkaFrames) throw new Error('the late-request scenarios need a fault stack started with kafkaFrames: true');
  const rounds = o.rounds ?? 1;
  return withRun(
    { fs: o.fs, log: o.log, delivery: o.delivery, ...(o.variant ? { variant: o.variant } : {}) },
    `late-${o.kind}`,
    {
      proxied: true,
      relayEnv: {
        OUTBOX_TAIL_KAFKA_REQUEST_TIMEOUT_MS: String(LATE_REQUEST_TIMEOUT_MS),
        OUTBOX_TAIL_KAFKA_RETRIES: '0',
        OUTBOX_TAIL_CONNECT_TIMEOUT_MS: '3000',
        OUTBOX_TAIL_RESTART_BACKOFF_INITIAL_MS: '200',
      },
      // The negative control may stall for good: give up waiting early.
      ...(o.variant ? { patienceMs: 30_000 } : {}),
    },
    async (run) => {
      const relay = await streamingRelay(run, {}, o.variant);
      run.startWriter({ ratePerSecond: 40 });
      await warmUp(run, 1_000);
      const late: RequestRecord[] = [];
      const findings: EpochFinding[] = [];
      let roundsRun = 0;
      let recovery = 0;
      const failedAfter: string[] = [];
      for (let i = 0; i < rounds; i++) {
        const r = await oneRound(o, run, relay);
        roundsRun++;
        recovery = Math.max(recovery, r.recovery);
        failedAfter.push(`${(r.failedAfterMs / 1000).toFixed(1)} s`);
        late.push(...r.late);
        findings.push(...r.findings);
        for (const l of r.late) run.log(`late ${JSON.stringify(outcome(l))}`);
        for (const f of r.findings) run.log(`epochs ${JSON.stringify(f)}`);
      }
      run.check('the relay kept running through the late requests', run.alive(relay));
      if (o.delivery === 'exactly-once') {
        run.check(`exactly-once: the failure left a transactional id to fence (${findings.length})`, findings.length > 0);
        for (const f of findings)
          run.check(
            `exactly-once: ${f.transactionalId} re-initialised (epoch ${f.failedEpoch} -> ${f.nextEpoch}) before sending anything else (${f.staleRequests} stale requests)`,
            f.nextEpoch !== null && f.nextEpoch > f.failedEpoch && f.staleRequests === 0,
          );
        const accepted = late.filter((l) => l.errorCode === 0);
        run.check(`exactly-once: the broker accepted no late transactional request (${accepted.length} of ${late.length})`, accepted.length === 0);
      }
      const c = await run.settle();
      run.checkCounts(c, { duplicates: 'allowed' });
      // Why each session ended: the code, and the Kafka error named in the message (OUT_OF_ORDER_SEQUENCE_NUMBER, ...).
      const ends = new Map<string, number>();
      for (const l of relay.logs.filter((x) => x.event === 'restart')) {
        const named = /\b[A-Z][A-Z_]{7,}\b/.exec(String(l.err).replace(String(l.code), ''))?.[0];
        const key = `${String(l.code)}${named ? ` ${named}` : ''}`;
        ends.set(key, (ends.get(key) ?? 0) + 1);
      }
      const answers = new Map<string, number>();
      for (const l of late) {
        const key = `${apiName(l.apiKey)} ${errorName(l.errorCode)}`;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
      run.note(
        `${roundsRun} round(s) of ${o.kind}, the relay gave up after ${failedAfter.join(', ')}; late requests answered: ${[...answers].map(([k, n]) => `${k} x${n}`).join(', ') || 'none held'}; epochs ${findings.map((f) => `${f.transactionalId} ${f.failedEpoch}->${f.nextEpoch} (${f.staleRequests} stale)`).join(', ') || '-'}; session restarts: ${[...ends].map(([k, n]) => `${k} x${n}`).join(', ') || 'none'}; writer ${run.writer?.stats.created} orders`,
      );
      return { ...run.result(c, recovery), late: late.map(outcome), epochs: findings, rounds_run: roundsRun } as LateRequestResult;
    },
  ) as Promise<LateRequestResult>;
}
