import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { confirmedFlushLsn, createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';
import { peekTransactions, type ShapeAttempt, untilShapeOccurs, waitForInactive } from '../support/witness-slot.js';

// --source messages|both against a real PostgreSQL 15 and Kafka: events written
// with outbox_tail.emit() (migrations/0003_emit_message.sql) and with
// writeOutboxEvent(..., { via: 'message' }).
// Servers of its own: its tests build exact WAL shapes (adjacent commits) that the WAL of
// four test files at a time on the shared server kept breaking (5 attempts of 5 missed in CI).
const bed = relayTestbed({ ownStack: 'relay-messages: WAL shapes' });

async function inTransaction<T>(fn: (c: pg.Client) => Promise<T>, end: 'commit' | 'rollback' = 'commit'): Promise<T> {
  const client = new pg.Client({ connectionString: bed.db.url });
  await client.connect();
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query(end);
    return result;
  } finally {
    await client.end();
  }
}
const emit = (c: pg.Client, type: string, key: string, eventType: string, payload = '{}', headers: string | null = null) =>
  c
    .query<{ id: string }>('select outbox_tail.emit($1, $2, $3, $4::jsonb, $5::jsonb)::text as id', [type, key, eventType, payload, headers])
    .then((r) => r.rows[0]!.id);

async function streamingRelay(source: 'messages' | 'both', topics: string[], env: Record<string, string> = {}) {
  const slot = uniqueName('slot');
  await createSlot(bed.db.url, slot);
  const collector = await bed.collect(topics);
  const relay = bed.relay(slot, { env: { OUTBOX_TAIL_SOURCE: source, ...env } });
  await relay.waitForLog(isStreaming);
  return { slot, collector, relay };
}

describe('relay --source messages (real Postgres and Kafka)', () => {
  it('publishes events of outbox_tail.emit() and writeOutboxEvent via message with topic, key, headers, and the payload byte for byte', async () => {
    const type = uniqueName('msg');
    const topic = `outbox.event.${type}`;
    const { slot, collector } = await streamingRelay('messages', [topic]);
    // Whitespace, key order, a number jsonb would keep but JSON.parse would not (1.50), unicode, an escaped newline.
    const rawPayload = '{ "z" : 1.50,\n  "a": ["ü☕", "line\\nbreak"] }';
    const { sqlId, tsId, sqlPayload } = await inTransaction(async (c) => {
      const sqlId = await emit(c, type, 'k-1', 'OrderCreated', rawPayload, '{"trace": "t-1", "n": 2}');
      const tsId = await writeOutboxEvent(
        c,
        { aggregateType: type, aggregateId: 'k-1', eventType: 'OrderPaid', payload: rawPayload, headers: { trace: 't-2' } },
        { via: 'message' },
      );
      const sqlPayload = (await c.query<{ t: string }>('select $1::jsonb::text as t', [rawPayload])).rows[0]!.t;
      return { sqlId, tsId, sqlPayload };
    });
    const end = await currentWalLsn(bed.db.url);
    await collector.waitForDistinct(2);
    expect(collector.records).toHaveLength(2);
    const [first, second] = collector.records;
    expect(first).toMatchObject({ topic, key: 'k-1' });
    expect(first!.headers).toMatchObject({ id: sqlId, event_type: 'OrderCreated', aggregate_type: type, aggregate_id: 'k-1', trace: 't-1' });
    expect(first!.headers.n).toBeUndefined();
    expect(first!.headers.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The SQL function takes jsonb: its payload is jsonb's text, as the table path publishes it.
    expect(first!.value!.equals(Buffer.from(sqlPayload, 'utf8'))).toBe(true);
    expect(second!.headers).toMatchObject({ id: tsId, event_type: 'OrderPaid', trace: 't-2' });
    // From TypeScript the payload text is never normalised.
    expect(second!.value!.equals(Buffer.from(rawPayload, 'utf8'))).toBe(true);
    expect(first!.headers.commit_lsn).toBe(second!.headers.commit_lsn);
    await waitForConfirmed(bed.db.url, slot, end);
  });

  it('both: a table row, a message and a row of one transaction arrive in that order, after the transaction before it', async () => {
    const type = uniqueName('mix');
    const topic = `outbox.event.${type}`;
    const { collector } = await streamingRelay('both', [topic]);
    const row = (c: pg.Client, eventType: string) =>
      c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'same-key', $2, '{}')`, [type, eventType]);
    await inTransaction(async (c) => emit(c, type, 'same-key', 'm0'));
    await inTransaction(async (c) => {
      await row(c, 'r1');
      await emit(c, type, 'same-key', 'm2');
      await writeOutboxEvent(c, { aggregateType: type, aggregateId: 'same-key', eventType: 'm3', payload: {} }, { via: 'message' });
      await row(c, 'r4');
    });
    await collector.waitForDistinct(5);
    const sorted = [...collector.records].sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)));
    expect(new Set(sorted.map((r) => r.partition)).size).toBe(1);
    expect(sorted.map((r) => r.headers.event_type)).toEqual(['m0', 'r1', 'm2', 'm3', 'r4']);
  });

  it('never sends a message of a rolled-back transaction or savepoint, and ignores other prefixes', async () => {
    const type = uniqueName('rb');
    const topic = `outbox.event.${type}`;
    const { slot, collector } = await streamingRelay('messages', [topic]);
    await inTransaction(async (c) => emit(c, type, 'k', 'rolled-back'), 'rollback');
    await inTransaction(
      async (c) => writeOutboxEvent(c, { aggregateType: type, aggregateId: 'k', eventType: 'rolled-back-ts', payload: {} }, { via: 'message' }),
      'rollback',
    );
    const kept = await inTransaction(async (c) => {
      const before = await emit(c, type, 'k', 'kept-1');
      await c.query('savepoint s1');
      await emit(c, type, 'k', 'savepoint-rolled-back');
      await c.query('rollback to savepoint s1');
      // A message of someone else's, with content that would parse as ours.
      await writeOutboxEvent(
        c,
        { aggregateType: type, aggregateId: 'k', eventType: 'foreign-prefix', payload: {} },
        { via: 'message', messagePrefix: 'not-outbox-tail' },
      );
      await c.query(`select pg_logical_emit_message(true, 'other-app', 'hello')`);
      const after = await emit(c, type, 'k', 'kept-2');
      return [before, after];
    });
    const marker = await inTransaction(async (c) => emit(c, type, 'k', 'marker'));
    const end = await currentWalLsn(bed.db.url);
    await collector.waitUntil((c) => c.records.some((r) => r.headers.id === marker));
    await waitForConfirmed(bed.db.url, slot, end);
    expect(collector.records.map((r) => r.headers.event_type)).toEqual(['kept-1', 'kept-2', 'marker']);
    expect(collector.records.map((r) => r.headers.id)).toEqual([...kept, marker]);
  });

  /**
   * A non-transactional message with our prefix, written in a transaction that
   * then rolls back, followed by a committed event: what reaches Kafka, how the
   * relay ends, and how far the slot was confirmed.
   */
  async function nonTransactionalInRolledBack(variant?: RelayVariant) {
    const type = uniqueName('ntx');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const relay = bed.relay(slot, { env: { OUTBOX_TAIL_SOURCE: 'messages' }, ...(variant ? { variant } : {}) });
    await relay.waitForLog(isStreaming);
    await inTransaction(async (c) => emit(c, type, 'k', 'before'));
    await collector.waitForDistinct(1);
    const badLsn = await inTransaction(async (c) => {
      const { rows } = await c.query<{ lsn: string }>(`select pg_logical_emit_message(false, 'outbox-tail', $1::text)::text as lsn`, [
        `{"v":1,"id":"non-tx-1","aggregate_type":"${type}","aggregate_id":"k","event_type":"rolled-back"}\n{}`,
      ]);
      return Lsn.parse(rows[0]!.lsn);
    }, 'rollback');
    const after = await inTransaction(async (c) => emit(c, type, 'k', 'after'));
    const exit = await Promise.race([relay.exited, collector.waitUntil((c) => c.records.some((r) => r.headers.id === after), 20_000).then(() => null)]);
    await relay.kill('SIGKILL');
    return {
      exitCode: exit?.code ?? null,
      stderr: relay.stderr(),
      badLsn,
      // badLsn is the end of the message's record (what pg_logical_emit_message returns): a confirm there or past it
      // skips the message on replay. Positions before it are fair: other tests write WAL on the shared server.
      confirmedPastBad: (await confirmedFlushLsn(bed.db.url, slot)) >= badLsn,
      published: collector.records.map((r) => r.headers.event_type),
    };
  }

  it('--on-malformed=fail halts on a non-transactional message of a rolled-back transaction, naming its LSN, never publishing or confirming past it (and catches a relay that publishes it)', async () => {
    const correct = await nonTransactionalInRolledBack();
    expect(correct.exitCode).toBe(5);
    expect(correct.stderr).toContain(
      `NON_TRANSACTIONAL_MESSAGE: logical decoding message at LSN ${Lsn.format(correct.badLsn)} (prefix outbox-tail, id=non-tx-1)`,
    );
    expect(correct.confirmedPastBad).toBe(false);
    expect(correct.published).toEqual(['before']);
    // Negative control: a relay that takes every message of its prefix publishes the rolled-back event (a phantom).
    const broken = await nonTransactionalInRolledBack('publish-non-transactional');
    expect(broken.exitCode).toBeNull();
    expect(broken.published).toEqual(['before', 'rolled-back', 'after']);
  });

  it('--on-malformed=dead-letter sends a pointer for a non-transactional message and for content that does not parse, and goes on', async () => {
    const type = uniqueName('ntxdl');
    const topic = `outbox.event.${type}`;
    const dlt = uniqueName('dlt');
    const { slot, collector } = await streamingRelay('messages', [topic, dlt], { OUTBOX_TAIL_ON_MALFORMED: 'dead-letter', OUTBOX_TAIL_DEAD_LETTER_TOPIC: dlt });
    const [{ lsn: nonTxLsn }] = (await query<{ lsn: string }>(bed.db.url, `select pg_logical_emit_message(false, 'outbox-tail', $1::text)::text as lsn`, [
      `{"v":1,"id":"non-tx-2","aggregate_type":"${type}","aggregate_id":"k","event_type":"x"}\n{}`,
    ])) as [{ lsn: string }];
    await inTransaction(async (c) => c.query(`select pg_logical_emit_message(true, 'outbox-tail', '{"v":1,"id":"bad-1"}')`));
    const after = await inTransaction(async (c) => emit(c, type, 'k', 'after'));
    const end = await currentWalLsn(bed.db.url);
    await collector.waitUntil((c) => c.records.some((r) => r.headers.id === after) && c.records.filter((r) => r.topic === dlt).length === 2);
    const pointers = collector.records.filter((r) => r.topic === dlt).map((r) => JSON.parse(r.value!.toString()) as Record<string, unknown>);
    expect(pointers[0]).toMatchObject({ id: 'non-tx-2', message_lsn: Lsn.format(Lsn.parse(nonTxLsn)), transactional: false, message_prefix: 'outbox-tail' });
    expect(pointers[0]!.reason).toMatch(/non-transactional/);
    expect(pointers[1]).toMatchObject({ id: 'bad-1', transactional: true, reason: 'malformed: no newline after the envelope' });
    expect(collector.records.filter((r) => r.topic === topic).map((r) => r.headers.id)).toEqual([after]);
    await waitForConfirmed(bed.db.url, slot, end);
  });

  it('--heartbeat-interval-ms emits a non-transactional heartbeat while nothing streams: never published, and the slot is confirmed past it', async () => {
    const type = uniqueName('hb');
    const topic = `outbox.event.${type}`;
    const { slot, collector, relay } = await streamingRelay('messages', [topic], { OUTBOX_TAIL_HEARTBEAT_INTERVAL_MS: '300', OUTBOX_TAIL_LOG_LEVEL: 'debug' });
    const first = await relay.waitForLog((l) => l.event === 'heartbeat', 10_000);
    const heartbeatLsn = Lsn.parse(first.lsn as string);
    await waitForConfirmed(bed.db.url, slot, heartbeatLsn, 15_000);
    await relay.waitForLog((l) => l.event === 'heartbeat' && Lsn.parse(l.lsn as string) > heartbeatLsn, 10_000);
    // An event still goes through between heartbeats, and nothing of the heartbeats reached Kafka.
    const id = await inTransaction(async (c) => emit(c, type, 'k', 'between-heartbeats'));
    await collector.waitForDistinct(1);
    expect(collector.records.map((r) => r.headers.id)).toEqual([id]);
    expect(relay.logs.some((l) => l.event === 'heartbeat-failed' || l.level === 'error')).toBe(false);
  });

  interface AcrossKill {
    message: number;
    dml: number;
    confirmedAtKill: Lsn;
    messageTxnEnd: Lsn;
    messageCommitLsn: Lsn;
  }

  /**
   * The Debezium shapes (dbz#2004 duplicates after a restart, dbz#2058 DML lost
   * after its fix): a transaction holding only a message is published and
   * confirmed, the relay is killed, then a DML transaction commits (with
   * `adjacent`, it was opened before the message transaction, so its commit
   * record starts exactly at the message transaction's end LSN), and a new
   * relay starts. How often did each arrive? The WAL shape is proven on a
   * witness slot (the DML's commit, or without `adjacent` its first change,
   * starts exactly at the message transaction's end, so nothing else was
   * written before the kill); an attempt where other WAL landed in between is
   * built again.
   */
  async function messageThenDmlAcrossKill(variant: RelayVariant, adjacent: boolean): Promise<ShapeAttempt<AcrossKill>> {
    const type = uniqueName('dbz');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    const witness = uniqueName('witness');
    await createSlot(bed.db.url, slot);
    await createSlot(bed.db.url, witness);
    try {
      const collector = await bed.collect([topic]);
      const start = () => bed.relay(slot, { variant, env: { OUTBOX_TAIL_SOURCE: 'both' } });
      const first = start();
      await first.waitForLog(isStreaming);
      const dml = new pg.Client({ connectionString: bed.db.url });
      await dml.connect();
      const insertDml = () => dml.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, 'dml', 'E', '{}')`, [type]);
      if (adjacent) {
        await dml.query('begin');
        await insertDml();
      }
      await inTransaction(async (c) => emit(c, type, 'msg', 'E'));
      await collector.waitUntil((c) => c.records.some((r) => r.key === 'msg'));
      const messageTxn = (await peekTransactions(bed.db.url, witness, { messages: true })).find((t) => t.messages.some((m) => m.includes(type)));
      if (!messageTxn) throw new Error('witness slot: the message transaction not found');
      const messageTxnEnd = messageTxn.endLsn;
      // The confirm this variant makes for the message transaction (the slot stops there: nothing else is open or sent).
      const expectedConfirm =
        variant === 'confirm-commit-start' ? messageTxn.commitLsn : variant === 'confirm-end-plus-one' ? Lsn.of(messageTxnEnd + 1n) : messageTxnEnd;
      await waitForConfirmed(bed.db.url, slot, expectedConfirm, 10_000);
      await first.kill('SIGKILL');
      await waitForInactive(bed.db.url, slot);
      const confirmedAtKill = await confirmedFlushLsn(bed.db.url, slot);
      if (adjacent) await dml.query('commit');
      else await insertDml();
      await dml.end();
      const marker = await inTransaction(async (c) => emit(c, type, 'marker', 'E'));
      const dmlTxn = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('dml'));
      if (!dmlTxn) throw new Error('witness slot: the DML transaction not found');
      const shape = {
        messageTxnEnd: Lsn.format(messageTxnEnd),
        dmlBeginLsn: Lsn.format(dmlTxn.beginLsn),
        dmlCommitLsn: Lsn.format(dmlTxn.commitLsn),
        confirmedAtKill: Lsn.format(confirmedAtKill),
      };
      if ((adjacent ? dmlTxn.commitLsn : dmlTxn.beginLsn) !== messageTxnEnd)
        return {
          shapeMet: false,
          why: `the DML's ${adjacent ? 'commit' : 'first change'} does not start at the message transaction's end (other WAL in between)`,
          shape,
        };
      const second = start();
      await second.waitForLog(isStreaming);
      await collector.waitUntil((c) => c.records.some((r) => r.headers.id === marker), 20_000);
      await second.kill('SIGKILL');
      const copies = (key: string) => collector.records.filter((r) => r.key === key).length;
      const messageCommitLsn = Lsn.parse(collector.records.find((r) => r.key === 'msg')!.headers.commit_lsn!);
      expect(messageCommitLsn).toBe(messageTxn.commitLsn);
      return { shapeMet: true, shape, message: copies('msg'), dml: copies('dml'), confirmedAtKill, messageTxnEnd, messageCommitLsn };
    } finally {
      await query(bed.db.url, 'select pg_drop_replication_slot($1)', [witness]).catch(() => undefined);
    }
  }
  const across = (variant: RelayVariant, adjacent: boolean) =>
    untilShapeOccurs(`${adjacent ? 'dbz#2058' : 'dbz#2004'} ${variant}`, () => messageThenDmlAcrossKill(variant, adjacent));

  it('dbz#2004 shape: a confirmed message transaction is not sent again after a kill, the next DML transaction is (and catches a relay that confirms the commit start)', async () => {
    const correct = await across('correct', false);
    expect(correct.confirmedAtKill).toBe(correct.messageTxnEnd);
    expect({ message: correct.message, dml: correct.dml }).toEqual({ message: 1, dml: 1 });
    const broken = await across('confirm-commit-start', false);
    expect(broken.confirmedAtKill).toBe(broken.messageCommitLsn);
    expect({ message: broken.message, dml: broken.dml }).toEqual({ message: 2, dml: 1 });
  });

  it('dbz#2058 shape: a DML transaction whose commit starts exactly at the confirmed end of a message transaction is delivered after a kill (and catches a relay that confirms end LSN + 1)', async () => {
    const correct = await across('correct', true);
    expect(correct.confirmedAtKill).toBe(correct.messageTxnEnd);
    expect({ message: correct.message, dml: correct.dml }).toEqual({ message: 1, dml: 1 });
    const broken = await across('confirm-end-plus-one', true);
    expect(broken.confirmedAtKill).toBe(broken.messageTxnEnd + 1n);
    expect({ message: broken.message, dml: broken.dml }).toEqual({ message: 1, dml: 0 });
  });

  it('--source messages needs no outbox table: preflight checks only the publication (the table source still refuses to start without it)', async () => {
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const tableless = bed.relay(slot, { env: { OUTBOX_TAIL_SOURCE: 'messages', OUTBOX_TAIL_TABLE: 'public.no_such_outbox' } });
    await tableless.waitForLog(isStreaming);
    await tableless.kill('SIGKILL');
    const table = bed.relay(slot, { env: { OUTBOX_TAIL_TABLE: 'public.no_such_outbox' } });
    expect((await table.exited).code).toBe(3);
    expect(table.stderr()).toContain('TABLE_MISSING');
  });
});
