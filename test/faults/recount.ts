/**
 * The fault suite's recount, the crash test's counting extended to the
 * invariants of docs/architecture.md#invariants that a fault run can check:
 *   I1 lost          committed outbox ids in neither the topic nor the dead-letter topic (with a reason)
 *   I2 phantoms      ids in Kafka that no committed row has (rolled back, or invented)
 *   I3 effects       consumer effects per committed id = 1 (when a consumer ran)
 *   I4 duplicates    records beyond the first per id (replays)
 *   I5 order         per key, first occurrences in commit order (crash test rule)
 *   I6 integrity     first record per id: payload, key and headers equal the row
 *   I7 LSN safety    no slot sample confirmed past a transaction before Kafka had
 *                    appended it: with LogAppendTime topics, an id whose commit_lsn
 *                    is below a sample's confirmed_flush_lsn must have been
 *                    appended at or before the sample's time (same host clock)
 */
import type pg from 'pg';
import { Lsn } from '../../src/shared/lsn.js';
import type { CollectedRecord } from '../support/kafka-collector.js';
import { countOrderViolations } from '../crash/crash-harness.js';
import type { SlotSample } from './slot-monitor.js';

export interface OutboxRow {
  id: string;
  aggregate_id: string | null;
  event_type: string;
  payload: string;
  headers: string | null;
}

export interface Counts {
  committed: number;
  kafka_records: number;
  delivered: number;
  dead_lettered: number;
  lost: number;
  phantoms: number;
  duplicates: number;
  order_violations: number;
  integrity_violations: number;
  lsn_violations: number;
  /** Only with a consumer: committed ids with effects != 1 (I3). */
  effect_violations: number | null;
  lostIds: string[];
  lsnViolationIds: string[];
  integrityExamples: string[];
}

export async function outboxRows(client: pg.ClientBase): Promise<OutboxRow[]> {
  return (await client.query<OutboxRow>('select id::text, aggregate_id, event_type, payload::text as payload, headers::text as headers from outbox')).rows;
}

export function recount(input: {
  rows: readonly OutboxRow[];
  records: readonly CollectedRecord[];
  topic: string;
  deadLetterTopic?: string;
  samples: readonly SlotSample[];
  /** id -> number of consumer effects (processed rows, shipments), when a consumer ran. */
  effects?: ReadonlyMap<string, number>;
}): Counts {
  const byId = new Map(input.rows.map((r) => [r.id, r]));
  const main = input.records.filter((r) => r.topic === input.topic);
  const dlt = input.deadLetterTopic ? input.records.filter((r) => r.topic === input.deadLetterTopic) : [];
  const firstMain = new Map<string, CollectedRecord>();
  for (const r of main) if (r.headers.id && !firstMain.has(r.headers.id)) firstMain.set(r.headers.id, r);
  const firstDlt = new Map<string, CollectedRecord>();
  for (const r of dlt) {
    const reason = (() => {
      try {
        return (JSON.parse(r.value?.toString() ?? '{}') as { reason?: string }).reason ?? r.headers.reason;
      } catch {
        return r.headers.reason;
      }
    })();
    // A dead-letter record counts as delivered only with a reason (I1, I10).
    if (r.headers.id && reason && !firstDlt.has(r.headers.id)) firstDlt.set(r.headers.id, r);
  }

  const lostIds: string[] = [];
  for (const id of byId.keys()) if (!firstMain.has(id) && !firstDlt.has(id)) lostIds.push(id);
  let phantoms = 0;
  for (const id of new Set([...firstMain.keys(), ...firstDlt.keys()])) if (!byId.has(id)) phantoms++;
  // Records without an id header cannot be matched to a row: phantoms too.
  phantoms += main.filter((r) => !r.headers.id).length;

  const integrityExamples: string[] = [];
  let integrity = 0;
  for (const [id, r] of firstMain) {
    const row = byId.get(id);
    if (!row) continue;
    const problems: string[] = [];
    if (r.value?.toString() !== row.payload) problems.push('payload');
    if (r.key !== row.aggregate_id || r.headers.aggregate_id !== row.aggregate_id) problems.push('key');
    if (r.headers.event_type !== row.event_type) problems.push('event_type');
    if (row.headers) {
      for (const [k, v] of Object.entries(JSON.parse(row.headers) as Record<string, unknown>)) {
        if (typeof v === 'string' && !['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at', 'commit_lsn'].includes(k) && r.headers[k] !== v)
          problems.push(`header ${k}`);
      }
    }
    if (problems.length > 0) {
      integrity++;
      if (integrityExamples.length < 3) integrityExamples.push(`${id}: ${problems.join(', ')}`);
    }
  }

  // I7: the first time each id was appended to Kafka (main or dead-letter topic).
  const appended = new Map<string, { at: number; lsn: bigint }>();
  for (const r of [...main, ...dlt]) {
    const id = r.headers.id;
    if (!id || !r.headers.commit_lsn) continue;
    const seen = appended.get(id);
    if (!seen || r.timestamp < seen.at) appended.set(id, { at: r.timestamp, lsn: Lsn.parse(r.headers.commit_lsn) });
  }
  const samples = input.samples.filter((s) => s.confirmed !== null);
  const lsnViolationIds: string[] = [];
  for (const [id, { at, lsn }] of appended) {
    // Confirming an LSN above a commit's start LSN tells Postgres never to send it again.
    if (samples.some((s) => s.confirmed! > lsn && s.t < at)) lsnViolationIds.push(id);
  }

  let effectViolations: number | null = null;
  if (input.effects) {
    effectViolations = 0;
    // Over what reached the consumer's topic (dead-lettered rows never reach it; lost ones count under I1).
    for (const id of firstMain.keys()) if (byId.has(id) && (input.effects.get(id) ?? 0) !== 1) effectViolations++;
  }

  return {
    committed: byId.size,
    kafka_records: main.length + dlt.length,
    delivered: firstMain.size,
    dead_lettered: firstDlt.size,
    lost: lostIds.length,
    phantoms,
    duplicates: main.length - firstMain.size + (dlt.length - new Set(dlt.map((r) => r.headers.id)).size),
    order_violations: countOrderViolations(main),
    integrity_violations: integrity,
    lsn_violations: lsnViolationIds.length,
    effect_violations: effectViolations,
    lostIds: lostIds.slice(0, 10),
    lsnViolationIds: lsnViolationIds.slice(0, 10),
    integrityExamples,
  };
}
