/**
 * The crash test of issue 4, after the seed article: an order app writes an
 * `orders` row and its outbox row in one transaction while the real relay
 * (a child process) is SIGKILLed again and again, and so is the idempotent
 * consumer; then everything is recounted. Used by `npm run crash` and by the
 * vitest crash project (including its negative controls).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import { cancelOrder, committedEventIdsSql, createOrder, createOrdersTable } from '../../dev/demo/order-app.js';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { createTestDatabase, uniqueName } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { createSlot, query, waitForConfirmed } from '../support/slot.js';
import { rng } from '../support/seeded-random.js';
import { peekTransactions, type DecodedTxn } from '../support/witness-slot.js';
import { SHARD_LAYOUTS, type ShardLayout } from '../support/broken-shards.js';
import { formatShard, shardName, shardPredicate } from '../../src/shared/shard-spec.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The offsets topic of an exactly-once run, created as `outbox-tail init` does. */
async function createCompactedTopic(brokers: string[], topic: string): Promise<void> {
  const admin = createKafka({ brokers, clientId: 'crash-offsets', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await createOffsetsTopic(admin, topic);
  } finally {
    await admin.disconnect();
  }
}

export interface CrashOptions {
  stack: { databaseUrl: string; brokers: string[] };
  orders: number;
  kills: number;
  consumerKills: number;
  seed: number;
  log?: (line: string) => void;
  /** Negative controls: a broken frontier (test code only). */
  relayVariant?: RelayVariant;
  /** Extra OUTBOX_TAIL_* settings for the relay. */
  relayEnv?: Record<string, string>;
  /** `naive` = no processed-messages table (negative control); `none` = no consumer. */
  consumerMode?: 'idempotent' | 'naive' | 'none';
  /** `naive` = the article's commit-then-send script instead of the outbox (negative control). */
  writerMode?: 'outbox' | 'naive';
  /**
   * At each kill: T2 open, T1 committed and confirmed, kill, then T2 commits (docs/architecture.md#lsn-rules, rule 3).
   * The hazard exists only when T2's commit record starts exactly at T1's end, and other WAL (another
   * test's database on the same server, autovacuum, a running-xacts record) can land in between: a
   * witness slot checks each straddle, and straddles are repeated (up to 3 x kills) until `kills` of
   * them had that shape. The result says how many did (`straddles`).
   */
  straddle?: boolean;
  cancelEvery?: number;
  rollbackEvery?: number;
  writerConcurrency?: number;
  /**
   * The first relay kill waits until the collector has read at least this many records (at most 120 s), so that the
   * relay has committed to Kafka once (in exactly-once: its watermark exists) before it is first killed, however slow
   * the machine is to start it. Default 0: the first kill comes 0.3-0.7 s into streaming like every other.
   */
  firstKillAfterRecords?: number;
  /** exactly-once: the relay runs --delivery exactly-once on an offsets topic of this run; the recount reads committed only. */
  delivery?: 'at-least-once' | 'exactly-once';
  /**
   * messages: the order app writes its events as logical decoding messages
   * (outbox_tail.emit() and writeOutboxEvent via message) and the relay runs
   * --source messages; committed event ids are recounted from the order rows,
   * which commit with them. Also adds savepoint rollbacks.
   */
  source?: 'table' | 'messages';
  /** The node binary the relay and the consumer run on (default: this process's), to compare runtimes. */
  node?: string;
  /**
   * A sharded outbox (docs/sharding.md): N row-filtered publications and
   * slots, one relay per shard (--shard i/N), the kills going round the
   * shards. Every shard's slot must be confirmed to the end.
   */
  shards?: number;
  /** Negative control: a broken layout of the shards' filters (test/support/broken-shards.ts). */
  shardLayout?: ShardLayout;
  /**
   * Decode on a hot standby of the stack's server (issue 43): the relay's slot is created on the standby and the
   * relay connects there; orders, the outbox and the recount stay on the primary. The standby's slot must be
   * confirmed up to what the primary wrote.
   */
  standby?: { urlFor(database: string): string; createSlot(standbyUrl: string, primaryUrl: string, slot: string): Promise<void> };
}

export interface CrashResult {
  orders: number;
  outbox: number;
  kafka_records: number;
  distinct_ids: number;
  duplicates: number;
  shipments: number;
  processed: number;
  lost: number;
  phantoms: number;
  order_violations: number;
  relay_kills: number;
  consumer_kills: number;
  /** The second write path: cancellations. */
  cancelled: { orders: number; outbox: number; distinct_ids: number; processed: number; shipments: number };
  rolled_back_transactions: number;
  /** messages: committed transactions with an event emitted in a rolled-back savepoint (never sent). */
  rolled_back_savepoints: number;
  source: 'table' | 'messages';
  delivery: 'at-least-once' | 'exactly-once';
  /** What a read_uncommitted consumer saw: every record, and those of Kafka transactions that never committed (cut by the kills). */
  read_uncommitted: { records: number; aborted: number };
  /** Error codes the relays stopped with (a fatal log line), in order. */
  relay_fatal_codes: string[];
  /** `node --version` of the relay and the consumer. */
  node: string;
  /** Sharded runs: the relays' i/N and whether every shard's slot was confirmed to the end of the WAL written. */
  shards: { relays: string[]; slots_confirmed_to_end: boolean } | null;
  /** With `standby`: the standby's slot confirmed up to the primary's last WAL position. */
  standby: { slot_confirmed_to_end: boolean } | null;
  /** straddle runs: kills set up as straddles, and those where T2's commit record began exactly at T1's end. */
  straddles: { attempted: number; adjacent: number };
  seconds: number;
  passed: boolean;
}

/** Seeded, so a run's kill timings are reproducible from --seed. */
export { rng };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * I5, the recount's order rule, shared by this recount and the fault suite's:
 * per key, first occurrences of ids must follow commit order (commit_lsn
 * header), and a cancellation never precedes its creation. Records in
 * consumption order.
 */
export function countOrderViolations(records: ReadonlyArray<{ key: string | null; headers: Record<string, string> }>): number {
  let violations = 0;
  const firstSeen = new Set<string>();
  const lastPerKey = new Map<string, { lsn: bigint; type: string }>();
  for (const r of records) {
    const id = r.headers.id ?? '';
    if (firstSeen.has(id)) continue;
    firstSeen.add(id);
    if (!r.headers.commit_lsn) continue;
    const lsn = Lsn.parse(r.headers.commit_lsn);
    const previous = lastPerKey.get(r.key ?? '');
    if (previous && (lsn < previous.lsn || (previous.type === 'OrderCancelled' && r.headers.event_type === 'OrderCreated'))) violations++;
    lastPerKey.set(r.key ?? '', { lsn, type: r.headers.event_type ?? '' });
  }
  return violations;
}

interface Child {
  process: ChildProcess;
  exited: Promise<void>;
  output: () => string;
}

function spawnTs(script: string, args: string[], env: Record<string, string>, onLine?: (line: string) => void, node = process.execPath): Child {
  const child = spawn(node, ['--import', 'tsx', `${ROOT}${script}`, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => {
    partial += c.toString();
    let i: number;
    while ((i = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, i);
      partial = partial.slice(i + 1);
      out += `${line}\n`;
      onLine?.(line);
    }
  });
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { process: child, exited, output: () => out.slice(-4000) };
}

async function killChild(child: Child | null, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill(signal);
  await child.exited;
}

export async function runCrash(options: CrashOptions): Promise<CrashResult> {
  const log = options.log ?? (() => undefined);
  const random = rng(options.seed);
  const consumerMode = options.consumerMode ?? 'idempotent';
  const writerMode = options.writerMode ?? 'outbox';
  const cancelEvery = options.cancelEvery ?? 5;
  const rollbackEvery = options.rollbackEvery ?? 7;
  const source = options.source ?? 'table';
  const via = source === 'messages' ? 'message' : 'table';
  const started = Date.now();
  if (options.standby && (options.shards || options.straddle)) throw new Error('runCrash: standby runs neither shards nor straddles');
  const db = await createTestDatabase(options.stack);
  const relayUrl = options.standby ? options.standby.urlFor(db.name) : db.url;
  const run = uniqueName('crash');
  const slot = run;
  const topic = `${run}.order`;
  const group = `${run}-shipping`;
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const delivery = options.delivery ?? 'at-least-once';
  // Both read the same topic from the start: the first as a consumer reads by default (read_committed), the second everything.
  const collector = await new KafkaCollector(options.stack.brokers).start([topic]);
  const uncommitted = await new KafkaCollector(options.stack.brokers, { readUncommitted: true }).start([topic]);
  const fatalCodes: string[] = [];
  const shardSpecs = options.shards ? SHARD_LAYOUTS[options.shardLayout ?? 'correct'](options.shards) : null;
  // One relay per shard (one in all when not sharded); a kill takes them in turn.
  const relays: Array<RelayProcess | null> = shardSpecs ? shardSpecs.map(() => null) : [null];
  let consumer: Child | null = null;
  let naiveWriter: Child | null = null;
  try {
    await createOrdersTable(admin);
    await admin.query(
      'create table shipments (id bigserial primary key, order_id bigint not null, event_id text not null, cancelled boolean not null default false)',
    );
    if (shardSpecs) {
      if (options.straddle) throw new Error('straddle kills are not set up for sharded runs');
      // As `outbox-tail init --shards N` creates them (src/commands/init/init-shards.ts), but each with its layout's i/N.
      for (const spec of shardSpecs) {
        const publication = shardName('outbox_tail', spec.index);
        await admin.query(`create publication ${publication} for table public.outbox where ${shardPredicate('aggregate_id', spec)} with (publish = 'insert')`);
        await createSlot(db.url, shardName(slot, spec.index));
      }
      if (source === 'messages') await admin.query(`insert into outbox_tail.message_shards (prefix, shards) values ('outbox-tail', $1)`, [options.shards]);
    } else {
      if (options.standby) await options.standby.createSlot(relayUrl, db.url, slot);
      else await createSlot(db.url, slot);
    }
    // Only peeked: what the relay's slot is sent, to tell which straddles really had adjacent commits.
    const witness = `${slot}_w`;
    if (options.straddle) await createSlot(db.url, witness);
    const hasAggregate = (t: DecodedTxn, id: number) =>
      t.aggregateIds.includes(String(id)) || t.messages.some((m) => new RegExp(`"aggregate_id":\\s*"${id}"`).test(m));

    const offsetsTopic = `${run}.offsets`;
    if (delivery === 'exactly-once') await createCompactedTopic(options.stack.brokers, offsetsTopic);
    const deliveryEnv: Record<string, string> =
      delivery === 'exactly-once' ? { OUTBOX_TAIL_DELIVERY: 'exactly-once', OUTBOX_TAIL_OFFSETS_TOPIC: offsetsTopic } : {};
    const relayEnv = {
      OUTBOX_TAIL_TOPIC: `${run}.{aggregate_type}`,
      ...(source === 'messages' ? { OUTBOX_TAIL_SOURCE: 'messages' } : {}),
      ...deliveryEnv,
      ...options.relayEnv,
    };
    const newRelay = (shard = 0) => {
      const spec = shardSpecs?.[shard];
      const started = startRelay({
        databaseUrl: relayUrl,
        brokers: options.stack.brokers,
        slot,
        env: spec ? { ...relayEnv, OUTBOX_TAIL_SHARD: formatShard(spec) } : relayEnv,
        ...(options.relayVariant ? { variant: options.relayVariant } : {}),
        ...(options.node ? { node: options.node } : {}),
      });
      void started.exited.then(() => {
        for (const line of started.logs) if (line.event === 'fatal' && line.code) fatalCodes.push(line.code);
      });
      return started;
    };
    // A relay that stopped for good (a negative control's guard) never logs streaming: do not wait a minute for it.
    const streamingOrExit = (r: RelayProcess) => Promise.race([r.waitForLog(isStreaming, 60_000), r.exited]).catch(() => undefined);
    const consumerEnv = { CRASH_BROKERS: options.stack.brokers.join(','), CRASH_DATABASE_URL: db.url, CRASH_TOPIC: topic, CRASH_GROUP: group };
    const newConsumer = () =>
      consumerMode === 'none' ? null : spawnTs('test/crash/consumer-process.ts', [consumerMode], consumerEnv, undefined, options.node);

    if (writerMode === 'outbox') {
      for (let i = 0; i < relays.length; i++) relays[i] = newRelay(i);
      await Promise.all(relays.map((r) => r!.waitForLog(isStreaming)));
    }
    consumer = newConsumer();

    const count = async (sql: string, params: unknown[] = []) => Number((await admin.query<{ n: string }>(sql, params)).rows[0]!.n);
    // The committed events: outbox rows, or with messages the event ids the order rows committed with.
    const eventIdsSql = (eventType: 'OrderCreated' | 'OrderCancelled' | null) => committedEventIdsSql(via, eventType);
    const countEvents = (eventType: 'OrderCreated' | 'OrderCancelled' | null = null) => count(`select count(*) as n from (${eventIdsSql(eventType)}) e`);
    const killLine = async (k: number, what: string) => {
      const orders = await count('select count(*) as n from orders');
      const outbox = await countEvents();
      const shipments = await count('select count(*) as n from shipments');
      // On a standby the WAL's end is what it replayed (pg_current_wal_lsn() fails during recovery).
      const lags = options.standby
        ? await query<{ lag: string | null }>(
            relayUrl,
            'select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), confirmed_flush_lsn)::text as lag from pg_replication_slots where slot_name = $1',
            [slot],
          )
        : (
            await admin.query<{ lag: string | null }>(
              'select pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text as lag from pg_replication_slots where slot_name = any($1) order by slot_name',
              [shardSpecs ? shardSpecs.map((s) => shardName(slot, s.index)) : [slot]],
            )
          ).rows;
      log(
        `kill #${k}${what}: orders=${orders} outbox=${outbox} kafka_records=${collector.records.length} distinct_ids=${collector.distinctIds().size} confirmed_lag_bytes=${lags.map((l) => l.lag ?? '-').join(',') || '-'} shipments=${shipments}`,
      );
    };

    // --- the writer -------------------------------------------------------------
    let gate: Promise<void> | null = null; // closed while a straddle kill is set up
    let rolledBack = 0;
    let savepointRollbacks = 0;
    // Spread the writes over the whole kill window, so every kill lands while orders are written:
    // a kill cycle is a relay restart (about 1-2 s until it streams) plus 0.3-0.7 s of streaming.
    const killWindowMs = options.kills * 3000 + 1000;
    const rate = options.orders / (killWindowMs / 1000);
    let nextId = 1;
    let inFlight = 0;
    let writerError: unknown = null;
    const writeOne = async (client: pg.Client, id: number) => {
      // Savepoint rollbacks on other orders than the rolled-back transactions below.
      const savepointRollback = source === 'messages' && id % rollbackEvery === 3;
      await createOrder(client, id, { via, savepointRollback });
      if (savepointRollback) savepointRollbacks++;
      if (id % cancelEvery === 0) await cancelOrder(client, id, { via, ...(options.shards ? { shards: options.shards } : {}) });
      if (id % rollbackEvery === 0) {
        // A transaction the application rolls back: its outbox row must never reach Kafka.
        await client.query('begin');
        await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, 1)', [10_000_000 + id, 'rolled-back']);
        await writeOutboxEvent(
          client,
          { aggregateType: 'order', aggregateId: String(10_000_000 + id), eventType: 'OrderCreated', payload: { orderId: 10_000_000 + id } },
          { via, ...(options.shards ? { shards: options.shards } : {}) },
        );
        await client.query('rollback');
        rolledBack++;
      }
    };
    const outboxWriter = async () => {
      const workers = Array.from({ length: options.writerConcurrency ?? 4 }, async () => {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          while (nextId <= options.orders) {
            const id = nextId++;
            const due = started + (id / rate) * 1000;
            if (due > Date.now()) await sleep(due - Date.now());
            // A straddle needs a quiet WAL: no write may start while the gate is closed.
            while (gate) await gate;
            inFlight++;
            try {
              await writeOne(client, id);
            } finally {
              inFlight--;
            }
          }
        } finally {
          await client.end();
        }
      });
      await Promise.all(workers);
    };
    // The naive writer is restarted after each kill and continues with the next order.
    let naiveNext = 1;
    let naiveCommitted = 0;
    let onCommitted: (() => void) | null = null;
    const startNaive = () => {
      naiveWriter = spawnTs('test/crash/naive-writer-process.ts', [String(naiveNext), String(options.orders)], consumerEnv, (line) => {
        const [word, id] = line.split(' ');
        if (word === 'committed') {
          naiveNext = Number(id) + 1;
          naiveCommitted++;
          onCommitted?.();
        }
      });
    };
    const writing = (writerMode === 'outbox' ? outboxWriter() : Promise.resolve()).catch((e: unknown) => (writerError = e));
    if (writerMode === 'naive') startNaive();

    // --- the kills --------------------------------------------------------------
    let relayKills = 0;
    let consumerKills = 0;
    const straddles = { attempted: 0, adjacent: 0 };
    const consumerKillAt = new Set(
      Array.from({ length: options.consumerKills }, (_, j) => Math.max(1, Math.round(((j + 1) * options.kills) / (options.consumerKills + 1)))),
    );
    const killsToDo = options.straddle ? options.kills * 3 : options.kills;
    for (let k = 1; k <= killsToDo; k++) {
      if (options.straddle && straddles.adjacent >= options.kills) break;
      // Kill 0.3-0.7 s into the relay's streaming (a restart itself takes about a second
      // under load: counting from the spawn, most kills would hit a relay still starting).
      const victim = (k - 1) % relays.length;
      if (writerMode === 'outbox') await streamingOrExit(relays[victim]!);
      if (k === 1 && (options.firstKillAfterRecords ?? 0) > 0) {
        const want = options.firstKillAfterRecords!;
        const deadline = Date.now() + 120_000;
        while (collector.records.length < want) {
          if (Date.now() > deadline)
            throw new Error(`the relay published ${collector.records.length} of the ${want} record(s) wanted before the first kill within 120 s`);
          await sleep(50);
        }
      }
      await sleep(300 + random() * 400);
      if (writerMode === 'naive') {
        // Targeted kill point: right after a COMMIT, before its send. A writer that exited instead fails the run
        // with its output: waiting for its next commit would hang until the test's timeout.
        const writer = naiveWriter!;
        const committedNext = new Promise<void>((resolve) => (onCommitted = resolve));
        let timer: NodeJS.Timeout | undefined;
        const stalled = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), 60_000)));
        const next = await Promise.race([committedNext.then(() => 'committed' as const), writer.exited.then(() => 'exited' as const), stalled]);
        clearTimeout(timer);
        onCommitted = null;
        if (next !== 'committed')
          throw new Error(
            `the naive writer ${next === 'exited' ? `exited (code ${writer.process.exitCode})` : 'committed nothing for 60 s'} before kill #${k}:\n${writer.output()}`,
          );
        await killChild(naiveWriter);
        relayKills++;
        await killLine(k, ' (naive writer)');
        if (naiveNext <= options.orders) startNaive();
        continue;
      }
      if (options.straddle) {
        let release!: () => void;
        gate = new Promise((resolve) => (release = resolve));
        while (inFlight > 0) await sleep(5);
        const t2 = new pg.Client({ connectionString: db.url });
        await t2.connect();
        const t2Id = 20_000_000 + k;
        await t2.query('begin');
        // The order row records the event id like createOrder does, so the recount sees T2 in either mode.
        const t2Event = await writeOutboxEvent(
          t2,
          { aggregateType: 'order', aggregateId: String(t2Id), eventType: 'OrderCreated', payload: { orderId: t2Id } },
          { via },
        );
        await t2.query('insert into orders(id, customer, amount_cents, created_event_id) values ($1, $2, 1, $3)', [
          t2Id,
          'straddle',
          via === 'message' ? t2Event : null,
        ]);
        const t1Id = 30_000_000 + k;
        await createOrder(admin, t1Id, { via });
        // T1 is confirmed once the slot passes its commit record (the frontier only stops at commit end LSNs).
        await collector.waitUntil((c) => c.records.some((r) => r.key === String(t1Id)), 20_000, `straddle T1 ${t1Id}`);
        const t1Commit = Lsn.parse(collector.records.find((r) => r.key === String(t1Id))!.headers.commit_lsn!);
        await waitForConfirmed(db.url, slot, Lsn.of(t1Commit + 1n), 20_000);
        await relays[0]!.kill('SIGKILL');
        await t2.query('commit');
        await t2.end();
        straddles.attempted++;
        const txns = await peekTransactions(db.url, witness, { messages: via === 'message' });
        const t1Txn = txns.find((t) => hasAggregate(t, t1Id));
        const t2Txn = txns.find((t) => hasAggregate(t, t2Id));
        const adjacent = t1Txn !== undefined && t2Txn !== undefined && t2Txn.commitLsn === t1Txn.endLsn;
        if (adjacent) straddles.adjacent++;
        log(
          `straddle #${straddles.attempted}: T1 ends ${t1Txn ? Lsn.format(t1Txn.endLsn) : '?'}, T2's commit starts ${t2Txn ? Lsn.format(t2Txn.commitLsn) : '?'}: ${adjacent ? 'adjacent' : 'other WAL in between'}`,
        );
        // Advance the witness past what was checked, so the next peek decodes only the new WAL.
        if (t2Txn) await admin.query('select pg_replication_slot_advance($1, $2::pg_lsn)', [witness, Lsn.format(t2Txn.endLsn)]);
        gate = null;
        release();
      } else {
        await relays[victim]!.kill('SIGKILL');
      }
      relayKills++;
      let what = '';
      if (consumerKillAt.has(k) && consumer) {
        await killChild(consumer);
        consumerKills++;
        what = ' (and consumer)';
        consumer = newConsumer();
      }
      await killLine(k, shardSpecs ? `${what} (shard ${formatShard(shardSpecs[victim]!)})` : what);
      relays[victim] = newRelay(victim);
    }
    await writing;
    if (writerError) throw writerError;
    if (writerMode === 'naive') {
      await naiveWriter!.exited;
    }

    // --- let everything settle ----------------------------------------------------
    // The quiet window starts once the last relay streams: a restart under load (a sink thread, four
    // test files beside it) took longer than the window, and the recount then ran before the relay
    // had delivered what the last straddle committed (CI, TC PG 18: the correct relay "lost 1").
    if (writerMode === 'outbox') await Promise.all(relays.map((r) => (r ? streamingOrExit(r) : undefined)));
    const committedEvents = await countEvents();
    const createdEvents = await countEvents('OrderCreated');
    // A bound on the whole catch-up that grows with the work: 10,000 orders and 50 kills left the consumer still
    // making progress at a flat 120 s (2026-12-05, loaded machine). A stall is caught by the quiet limit below.
    const deadline = Date.now() + Math.max(120_000, committedEvents * 30);
    let lastChange = Date.now();
    let lastSeen = '';
    for (;;) {
      const processed = consumerMode === 'idempotent' ? await count('select count(*) as n from processed_messages where consumer_group = $1', [group]) : 0;
      const shipments = consumerMode === 'none' ? 0 : await count('select count(*) as n from shipments');
      const seen = `${collector.records.length}/${processed}/${shipments}`;
      if (seen !== lastSeen) {
        lastSeen = seen;
        lastChange = Date.now();
      }
      const complete =
        writerMode === 'outbox' &&
        collector.distinctIds().size >= committedEvents &&
        (consumerMode !== 'idempotent' || processed >= committedEvents) &&
        (consumerMode !== 'naive' || shipments >= createdEvents);
      // Incomplete and quiet for longer than a consumer group rebalance after a kill: it will not complete.
      const quietLimit = consumerMode === 'none' ? 3_000 : 15_000;
      if ((complete && Date.now() - lastChange > 500) || Date.now() - lastChange > quietLimit || Date.now() > deadline) break;
      await sleep(200);
    }
    // Every shard's slot confirmed to the end of the WAL written so far: the shards whose relays saw none of the last
    // transactions confirm them through keepalives (docs/architecture.md#lsn-rules, rule 5).
    let slotsConfirmed = false;
    if (shardSpecs && writerMode === 'outbox') {
      const [{ lsn }] = (await admin.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows as [{ lsn: string }];
      slotsConfirmed = await Promise.all(shardSpecs.map((s) => waitForConfirmed(db.url, shardName(slot, s.index), Lsn.parse(lsn), 30_000))).then(
        () => true,
        (error: unknown) => {
          log(`not every shard's slot was confirmed to the end: ${(error as Error).message}`);
          return false;
        },
      );
    }
    let standbyConfirmed = false;
    if (options.standby && writerMode === 'outbox') {
      const [{ lsn }] = (await admin.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows as [{ lsn: string }];
      standbyConfirmed = await waitForConfirmed(relayUrl, slot, Lsn.parse(lsn), 30_000).then(
        () => true,
        (error: unknown) => {
          log(`the standby's slot was not confirmed to the primary's end: ${(error as Error).message}`);
          return false;
        },
      );
    }
    await Promise.all(relays.map((r) => r?.kill('SIGTERM')));
    await killChild(consumer, 'SIGTERM');
    // The read_uncommitted view: no record count may still be moving once the relay stopped.
    await sleep(1_000);
    const committedAt = new Set(collector.records.map((r) => `${r.partition}:${r.offset}`));
    const aborted = uncommitted.records.filter((r) => !committedAt.has(`${r.partition}:${r.offset}`)).length;
    consumer = null;

    // --- recount ---------------------------------------------------------------------
    const rows = async (sql: string, params: unknown[] = []) => (await admin.query(sql, params)).rows;
    const created = new Set((await rows(eventIdsSql('OrderCreated'))).map((r) => r.id as string));
    const cancelledIds = new Set((await rows(eventIdsSql('OrderCancelled'))).map((r) => r.id as string));
    const orders = await count('select count(*) as n from orders');
    const cancelledOrders = await count(`select count(*) as n from orders where status = 'cancelled'`);
    const shipments = await count('select count(*) as n from shipments');
    const shipmentsCancelled = await count('select count(*) as n from shipments where cancelled');
    const processedIds = new Set(
      (await rows('select message_id from processed_messages where consumer_group = $1', [group])).map((r) => r.message_id as string),
    );
    const kafkaIds = collector.distinctIds();
    let lost = 0;
    let phantoms = 0;
    if (writerMode === 'naive') {
      const keys = new Set(collector.records.map((r) => r.key));
      for (const r of await rows('select id::text from orders')) if (!keys.has(r.id as string)) lost++;
    } else {
      for (const id of [...created, ...cancelledIds]) if (!kafkaIds.has(id)) lost++;
      for (const id of kafkaIds) if (!created.has(id) && !cancelledIds.has(id)) phantoms++;
    }
    const orderViolations = countOrderViolations(collector.records);
    const countIn = (ids: ReadonlySet<string>, of: Set<string>) => [...of].filter((id) => ids.has(id)).length;
    const result: CrashResult = {
      orders,
      outbox: writerMode === 'naive' ? 0 : created.size,
      kafka_records: collector.records.length,
      distinct_ids: writerMode === 'naive' ? kafkaIds.size : countIn(kafkaIds, created),
      duplicates: collector.records.length - kafkaIds.size,
      shipments,
      processed: countIn(processedIds, created),
      lost,
      phantoms,
      order_violations: orderViolations,
      relay_kills: relayKills,
      consumer_kills: consumerKills,
      cancelled: {
        orders: cancelledOrders,
        outbox: cancelledIds.size,
        distinct_ids: countIn(kafkaIds, cancelledIds),
        processed: countIn(processedIds, cancelledIds),
        shipments: shipmentsCancelled,
      },
      rolled_back_transactions: rolledBack,
      rolled_back_savepoints: savepointRollbacks,
      source,
      delivery,
      read_uncommitted: { records: uncommitted.records.length, aborted },
      relay_fatal_codes: fatalCodes,
      node: options.node ? execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim() : process.version,
      shards: shardSpecs ? { relays: shardSpecs.map(formatShard), slots_confirmed_to_end: slotsConfirmed } : null,
      standby: options.standby ? { slot_confirmed_to_end: standbyConfirmed } : null,
      straddles,
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
      passed: false,
    };
    const c = result.cancelled;
    result.passed =
      lost === 0 &&
      phantoms === 0 &&
      orderViolations === 0 &&
      [result.outbox, result.distinct_ids, result.shipments, result.processed].every((n) => n === result.orders) &&
      [c.outbox, c.distinct_ids, c.processed, c.shipments].every((n) => n === c.orders) &&
      (result.shards === null || result.shards.slots_confirmed_to_end) &&
      (result.standby === null || result.standby.slot_confirmed_to_end);
    void naiveCommitted;
    return result;
  } finally {
    await Promise.all(relays.map((r) => r?.kill('SIGKILL')));
    await killChild(consumer);
    await killChild(naiveWriter);
    await collector.stop();
    await uncommitted.stop();
    await admin.end().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

/** The article's table: one line per counter. */
export function formatResult(r: CrashResult): string {
  const rows: [string, number | string][] = [
    ['orders (rows)', r.orders],
    ['outbox rows (OrderCreated)', r.outbox],
    ['kafka records', r.kafka_records],
    ['distinct ids in kafka', r.distinct_ids],
    ['duplicates absorbed', r.duplicates],
    ['shipments (consumer effects)', r.shipments],
    ['processed ids', r.processed],
    ['lost', r.lost],
    ['phantoms', r.phantoms],
    ['order violations', r.order_violations],
    [
      'cancelled: orders / outbox / in kafka / processed / shipments',
      `${r.cancelled.orders} / ${r.cancelled.outbox} / ${r.cancelled.distinct_ids} / ${r.cancelled.processed} / ${r.cancelled.shipments}`,
    ],
    ['source (where the relay reads events)', r.source],
    ['rolled-back transactions (never sent)', r.rolled_back_transactions],
    ['savepoint rollbacks (their events never sent)', r.rolled_back_savepoints],
    ['delivery (kafka records counted read_committed)', r.delivery],
    ['read_uncommitted: records / of aborted kafka transactions', `${r.read_uncommitted.records} / ${r.read_uncommitted.aborted}`],
    ['relay fatal errors', r.relay_fatal_codes.join(', ') || 'none'],
    ...(r.straddles.attempted > 0
      ? ([['straddles: attempted / with adjacent commits', `${r.straddles.attempted} / ${r.straddles.adjacent}`]] as [string, string][])
      : []),
    ...(r.shards
      ? ([
          ['shards (one relay each)', r.shards.relays.join(', ')],
          ["every shard's slot confirmed to the end", r.shards.slots_confirmed_to_end ? 'yes' : 'NO'],
        ] as [string, string][])
      : []),
    ['relay kills / consumer kills', `${r.relay_kills} / ${r.consumer_kills}`],
    ['node (relay and consumer)', r.node],
    ['seconds', r.seconds],
    ['result', r.passed ? 'PASS' : 'FAIL'],
  ];
  return rows.map(([k, v]) => `  ${k.padEnd(62)} ${v}`).join('\n');
}
