/**
 * The regression zoo (docs/regression-zoo.md, issue 24): bugs other relays
 * shipped, each reproduced by its shape against our relay on real servers, and
 * each caught on a variant of our relay that has the bug (test/support/broken-zoo.ts).
 * The shapes here need no exact WAL layout, so they run on the shared servers;
 * the resume-LSN shapes are in regression-zoo-resume-lsn.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { logLevel } from 'kafkajs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { Lsn } from '../../src/shared/lsn.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { uniqueName } from '../support/database.js';
import type { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, type RelayProcess } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { confirmedFlushLsn, createSlot, currentWalLsn, dropSlot, query, waitForConfirmed } from '../support/slot.js';
import { tempDir } from '../support/temp-dir.js';
import { waitForInactive } from '../support/witness-slot.js';

const bed = relayTestbed();

const insertRow = (type: string, key: string) =>
  `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ('${type}', '${key}', 'E', '{}')`;

/** Commits a marker row and waits until it is in Kafka: everything committed before it was replayed by then. */
async function deliverMarker(type: string, collector: KafkaCollector): Promise<void> {
  await query(bed.db.url, insertRow(type, 'marker'));
  await collector.waitUntil((c) => c.records.some((r) => r.key === 'marker'), 30_000, 'marker');
}

const distinctIdsOfKey = (collector: KafkaCollector, key: string) => new Set(collector.records.filter((r) => r.key === key).map((r) => r.headers.id)).size;

/** Waits for a stderr line of the relay matching `pattern` (the variants' knobs report there). */
async function waitForStderr(relay: RelayProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = relay.stderr().match(pattern);
    if (match) return match;
    if (relay.child.exitCode !== null || relay.child.signalCode !== null) throw new Error(`relay exited before printing ${pattern}:\n${relay.stderr()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} on the relay's stderr within ${timeoutMs} ms:\n${relay.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('regression zoo: several events sharing one LSN (debezium/debezium#7531, DBZ-1554)', () => {
  const ROWS = 600;

  /**
   * A COPY writes one WAL record per heap page, so its rows share their page's
   * LSN. The relay is killed -9 right after Kafka acknowledged a row whose LSN
   * is shared by rows not yet acknowledged; the next relay must deliver them.
   */
  async function copyKilledInsideLsnGroup(variant: RelayVariant): Promise<{ lost: number; sharedByUnacked: number }> {
    const type = uniqueName('copy');
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    const env = { OUTBOX_TAIL_TEST_STATE_FILE: join(tempDir('zoo-copy-'), 'position'), OUTBOX_TAIL_BATCH_MAX_MESSAGES: '7' };
    const first = bed.relay(slot, { variant, env: { ...env, OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP: '1' } });
    await first.waitForLog(isStreaming);
    // Explicit ids: a volatile column default (gen_random_uuid()) turns COPY's multi-insert off. One key: one partition, acks in order.
    const prefix = randomBytes(4).toString('hex');
    const program = `awk 'BEGIN { for (i = 1; i <= ${ROWS}; i++) printf "${prefix}-0000-4000-8000-%012d\\t${type}\\tcopy\\tE\\t{\\"i\\": %d}\\n", i, i }'`;
    await query(bed.db.url, `copy outbox(id, aggregate_type, aggregate_id, event_type, payload) from program $zoo$${program}$zoo$`);
    const killed = await waitForStderr(first, /zoo-kill-mid-lsn-group acked=(\d+) lsn=(\S+) shared-by-unacked=(\d+)/);
    await first.exited;
    await waitForInactive(bed.db.url, slot);
    const second = bed.relay(slot, { variant, env });
    await second.waitForLog(isStreaming);
    await deliverMarker(type, collector);
    await second.kill('SIGKILL');
    return { lost: ROWS - distinctIdsOfKey(collector, 'copy'), sharedByUnacked: Number(killed[3]) };
  }

  it('delivers every row of a COPY after a kill -9 between rows that share one LSN (and catches a relay that treats that LSN as fully processed)', async () => {
    const correct = await copyKilledInsideLsnGroup('correct');
    console.log(`[DBZ-1554] correct: killed with ${correct.sharedByUnacked} unacked rows sharing the last acked LSN; lost ${correct.lost} of ${ROWS}`);
    expect(correct.sharedByUnacked).toBeGreaterThan(0);
    expect(correct.lost).toBe(0);
    const broken = await copyKilledInsideLsnGroup('skip-same-lsn-after-restart');
    console.log(
      `[DBZ-1554] skip-same-lsn-after-restart: killed with ${broken.sharedByUnacked} unacked rows sharing the last acked LSN; lost ${broken.lost} of ${ROWS}`,
    );
    expect(broken.sharedByUnacked).toBeGreaterThan(0);
    // The claim: it skips at least one row that shares an LSN with a delivered one.
    expect(broken.lost).toBeGreaterThan(0);
  });
});

describe('regression zoo: silent loss on restart while a transaction is in progress (debezium/debezium#7760, dbz#76, dbz#51)', () => {
  /**
   * T2 begins and writes a row; T1 commits after it and is confirmed, so the
   * slot's confirmed LSN lies inside T2; the relay is killed -9, T2 writes
   * another row and commits. Deterministic: T2's first record precedes T1's
   * commit by construction, no WAL layout needed.
   */
  async function inProgressAcrossKill(variant: RelayVariant): Promise<{ lost: number; confirmedInsideT2: boolean }> {
    const type = uniqueName('inprog');
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    const first = bed.relay(slot, { variant });
    await first.waitForLog(isStreaming);
    const t2 = new pg.Client({ connectionString: bed.db.url });
    await t2.connect();
    try {
      await t2.query('begin');
      await t2.query(insertRow(type, 't2'));
      const t2Started = Lsn.parse((await t2.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn);
      await query(bed.db.url, insertRow(type, 't1'));
      await collector.waitUntil((c) => c.records.some((r) => r.key === 't1'), 30_000, 't1');
      await waitForConfirmed(bed.db.url, slot, t2Started, 30_000);
      await first.kill('SIGKILL');
      await waitForInactive(bed.db.url, slot);
      const confirmedInsideT2 = (await confirmedFlushLsn(bed.db.url, slot)) >= t2Started;
      await t2.query(insertRow(type, 't2'));
      await t2.query('commit');
      const second = bed.relay(slot, { variant });
      await second.waitForLog(isStreaming);
      await deliverMarker(type, collector);
      await second.kill('SIGKILL');
      return { lost: 2 - distinctIdsOfKey(collector, 't2'), confirmedInsideT2 };
    } finally {
      await t2.end().catch(() => undefined);
    }
  }

  it('delivers every row of a transaction that was open across a confirm and a kill -9 (and catches a relay that drops replayed transactions begun at or below its resume LSN)', async () => {
    const correct = await inProgressAcrossKill('correct');
    console.log(`[dbz#76] correct: lost ${correct.lost} of 2 rows of T2`);
    expect(correct).toEqual({ lost: 0, confirmedInsideT2: true });
    const broken = await inProgressAcrossKill('skip-begin-at-resume-lsn');
    console.log(`[dbz#76] skip-begin-at-resume-lsn: lost ${broken.lost} of 2 rows of T2`);
    expect(broken.confirmedInsideT2).toBe(true);
    expect(broken.lost).toBeGreaterThan(0);
  });
});

describe('regression zoo: the streaming position flushed instead of the last commit’s (apache/seatunnel#11864)', () => {
  const ROWS = 5;

  /**
   * Kafka never acknowledges the first relay's records (OUTBOX_TAIL_TEST_HOLD_KAFKA),
   * a transaction is streamed to it, and the walsender reports (keepalive)
   * a position past that transaction's commit. The test waits until the
   * relay's status sender looked at its safe LSN after such a keepalive, then
   * kills it -9; the next relay, with Kafka answering, must deliver the transaction.
   *
   * The claim is measured against the held transaction's own Commit record:
   * PostgreSQL skips on replay a transaction whose Commit starts below the
   * confirmed LSN, so confirming past it is the loss. Positions before it are
   * fair game: other tests write WAL on the shared server, and an idle relay
   * rightly confirms a keepalive over their transactions.
   */
  async function unackedPastKeepalive(variant: RelayVariant): Promise<{ lost: number; confirmedPastUnacked: boolean }> {
    const type = uniqueName('stream');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const first = bed.relay(slot, { variant, env: { OUTBOX_TAIL_TEST_HOLD_KAFKA: '1', OUTBOX_TAIL_TEST_REPORT_KEEPALIVES: '1' } });
    await first.waitForLog(isStreaming);
    const c = new pg.Client({ connectionString: bed.db.url });
    await c.connect();
    let after: Lsn;
    try {
      await c.query('begin');
      for (let i = 0; i < ROWS; i++) await c.query(insertRow(type, 'held'));
      await c.query('commit');
      after = Lsn.parse((await c.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn);
    } finally {
      await c.end();
    }
    const escaped = topic.replace(/[.]/g, '\\.');
    const held = await waitForStderr(first, new RegExp(`zoo-kafka-held .*${escaped}@(\\S+)`));
    const heldCommitLsn = Lsn.parse(held[1]!);
    // The first status check after a keepalive at or past the transaction's end: the relay had its chance to confirm it.
    const deadline = Date.now() + 30_000;
    while (![...first.stderr().matchAll(/zoo-status-after-keepalive (\S+) (\S+)/g)].some((m) => Lsn.parse(m[1]!) >= after) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(
      [...first.stderr().matchAll(/zoo-status-after-keepalive (\S+)/g)].some((m) => Lsn.parse(m[1]!) >= after),
      first.stderr(),
    ).toBe(true);
    await first.kill('SIGKILL');
    await waitForInactive(bed.db.url, slot);
    const confirmedPastUnacked = (await confirmedFlushLsn(bed.db.url, slot)) > heldCommitLsn;
    const second = bed.relay(slot);
    await second.waitForLog(isStreaming);
    await deliverMarker(type, collector);
    await second.kill('SIGKILL');
    return { lost: ROWS - distinctIdsOfKey(collector, 'held'), confirmedPastUnacked };
  }

  it('never confirms past a transaction Kafka has not acknowledged, whatever position the walsender reports (and catches a relay that flushes the streaming position)', async () => {
    const correct = await unackedPastKeepalive('correct');
    console.log(`[seatunnel#11864] correct: confirmed past unacked ${correct.confirmedPastUnacked}, lost ${correct.lost} of ${ROWS}`);
    expect(correct).toEqual({ lost: 0, confirmedPastUnacked: false });
    const broken = await unackedPastKeepalive('confirm-streaming-position');
    console.log(`[seatunnel#11864] confirm-streaming-position: confirmed past unacked ${broken.confirmedPastUnacked}, lost ${broken.lost} of ${ROWS}`);
    expect(broken.confirmedPastUnacked).toBe(true);
    expect(broken.lost).toBeGreaterThan(0);
  });
});

describe('regression zoo: no final status update on graceful shutdown (Trendyol/go-pq-cdc#148)', () => {
  // The correct relay's side is relay-safety.test.ts, 'on SIGTERM publishes and confirms everything in flight, then exits 0'
  // (0 duplicates after a graceful restart); this is its negative control, under the same conditions.
  it('negative control: a relay that skips the final standby status update on SIGTERM republishes what it had published, after a graceful restart', async () => {
    const type = uniqueName('term');
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    // Periodic status updates far apart, so only the shutdown path could confirm in time.
    const broken = bed.relay(slot, { variant: 'no-final-status-update', env: { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' } });
    await broken.waitForLog(isStreaming);
    const before = await confirmedFlushLsn(bed.db.url, slot);
    await query(
      bed.db.url,
      `insert into outbox(aggregate_type, aggregate_id, event_type, payload) select $1, 'k' || i, 'E', '{}' from generate_series(1, 200) i`,
      [type],
    );
    const end = await currentWalLsn(bed.db.url);
    await collector.waitForDistinct(200);
    broken.child.kill('SIGTERM');
    expect(await broken.exited).toEqual({ code: 0, signal: null });
    expect(broken.stderr()).toContain('skipped the final standby status update');
    const confirmedAfterStop = await confirmedFlushLsn(bed.db.url, slot);
    const again = bed.relay(slot);
    await again.waitForLog(isStreaming);
    await deliverMarker(type, collector);
    const duplicates = collector.records.length - collector.distinctIds().size;
    console.log(
      `[go-pq-cdc#148] no-final-status-update: confirmed_flush_lsn ${Lsn.format(before)} -> ${Lsn.format(confirmedAfterStop)}; ${duplicates} duplicates of 200 after a graceful restart`,
    );
    // The claim: the slot was left before the published rows, so the restart republished at least one of them.
    expect(confirmedAfterStop).toBeLessThan(end);
    expect(duplicates).toBeGreaterThan(0);
  });
});

describe('regression zoo: a slot recreated silently, losing what was in no slot (DBZ-5739, debezium/debezium#3970)', () => {
  const GAP = 3;

  /**
   * Exactly-once: a relay publishes (its watermark is in Kafka) and stops; the
   * slot is dropped, rows are committed while no slot exists, the slot is
   * created anew, one more row is committed, and a relay starts on it. The
   * watermark lies behind the new slot's confirmed_flush_lsn: starting would
   * hide the rows in between.
   */
  async function slotRecreatedWhileDown(variant: RelayVariant): Promise<{ exit: number | null; code: string | null; gapLost: number; streamed: boolean }> {
    const type = uniqueName('recreated');
    const slot = uniqueName('slot');
    const offsetsTopic = uniqueName('zoo_offsets');
    const admin = createKafka({ brokers: bed.stack.brokers, clientId: 'zoo', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await createOffsetsTopic(admin, offsetsTopic);
    } finally {
      await admin.disconnect();
    }
    const env = { OUTBOX_TAIL_DELIVERY: 'exactly-once', OUTBOX_TAIL_OFFSETS_TOPIC: offsetsTopic };
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([`outbox.event.${type}`]);
    const first = bed.relay(slot, { env });
    await first.waitForLog(isStreaming, 60_000);
    await query(bed.db.url, insertRow(type, 'before'));
    await collector.waitUntil((c) => c.records.some((r) => r.key === 'before'), 30_000, 'before');
    first.child.kill('SIGTERM');
    await first.exited;
    await dropSlot(bed.db.url, slot);
    for (let i = 0; i < GAP; i++) await query(bed.db.url, insertRow(type, 'gap'));
    await createSlot(bed.db.url, slot);
    await query(bed.db.url, insertRow(type, 'after'));
    const second = bed.relay(slot, { env, variant });
    // Either it refuses (exits) or it streams and publishes the row committed into the new slot.
    const ended = await Promise.race([
      second.exited.then(() => 'exited' as const),
      collector.waitUntil((c) => c.records.some((r) => r.key === 'after'), 60_000, 'after').then(() => 'streamed' as const),
    ]);
    if (ended === 'streamed') await second.kill('SIGKILL');
    const exit = ended === 'exited' ? (await second.exited).code : null;
    const code = second.logs.find((l) => l.code === 'WATERMARK_BEHIND_SLOT')?.code ?? null;
    return { exit, code, gapLost: GAP - distinctIdsOfKey(collector, 'gap'), streamed: ended === 'streamed' };
  }

  it('exactly-once: refuses to start on a slot recreated behind its watermark, naming WATERMARK_BEHIND_SLOT (and catches a relay that trusts the slot’s position)', async () => {
    const correct = await slotRecreatedWhileDown('correct');
    console.log(`[DBZ-5739] correct: exit ${correct.exit} ${correct.code}, streamed ${correct.streamed}`);
    expect(correct.streamed).toBe(false);
    expect(correct.exit).not.toBe(0);
    expect(correct.code).toBe('WATERMARK_BEHIND_SLOT');
    const broken = await slotRecreatedWhileDown('trust-slot-position');
    console.log(`[DBZ-5739] trust-slot-position: streamed ${broken.streamed}, lost ${broken.gapLost} of ${GAP} rows committed while no slot existed`);
    expect(broken.streamed).toBe(true);
    expect(broken.gapLost).toBeGreaterThan(0);
  });
});
