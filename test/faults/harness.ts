/**
 * One fault run: a fresh database with the order app's tables, a slot, the
 * topics (LogAppendTime, so the recount can time Kafka's appends against the
 * slot's confirmations), a collector, a slot monitor, the relays (real
 * daemons, child processes), optionally the crash test's idempotent consumer
 * (supervised: restarted when a fault takes it down), and the recount.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { Lsn } from '../../src/shared/lsn.js';
import { RELAY_HEAP_MB, RELAY_HEAP_MB_EXACTLY_ONCE, RELAY_RSS_CEILING_MB } from '../support/relay-memory.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import type { CollectedRecord } from '../support/kafka-collector.js';
import { FaultCollector } from './collector.js';
import { startRelay, type RelayProcess } from '../support/relay-process.js';
import { createSlot } from '../support/slot.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import { proxiedDatabaseUrl, RELAY_PASSWORD, RELAY_ROLE, type FaultStack } from './fault-stack.js';
import { outboxRows, recount, type Counts } from './recount.js';
import { SlotMonitor } from './slot-monitor.js';
import { committedIdsSql, messageEventRows, prepareOrderTables, SteadyWriter, writerNote, type WriterOptions } from './writer.js';
import { committedEventIdsSql, type EventVia } from '../../dev/demo/order-app.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Put in the relay's database URL (trust auth ignores it): it must never be logged (I12). */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The broken relays of test/support, plus one that never confirms a keepalive (no-keepalive-confirm.mjs). */
export type FaultVariant = RelayVariant | 'no-keepalive-confirm';

export interface FaultRunOptions {
  fs: FaultStack;
  name: string;
  log: (line: string) => void;
  /** The relay reaches Postgres and Kafka through the proxies. */
  proxied?: boolean;
  /** A dead-letter topic (collected too). */
  deadLetter?: boolean;
  /** Run the crash test's idempotent consumer (I3). */
  consumer?: boolean;
  /** Config of the main topic (e.g. max.message.bytes). */
  topicConfig?: Record<string, string>;
  partitions?: number;
  /** OUTBOX_TAIL_* for every relay of this run. */
  relayEnv?: Record<string, string>;
  /**
   * Negative controls: every wait for delivery or catch-up gives up after this
   * long (a broken relay is expected to lose), instead of the normal bounds.
   */
  patienceMs?: number;
  /**
   * exactly-once: every relay runs --delivery exactly-once on an offsets topic
   * of this run; the collector reads committed only (as it always does), a
   * second one reads uncommitted to count the records of aborted Kafka
   * transactions, and the recount allows no duplicate at all.
   */
  delivery?: 'at-least-once' | 'exactly-once';
  /**
   * messages: the table-less outbox. Every relay runs --source messages, the
   * steady writer writes its events as logical decoding messages (writer.ts),
   * and the recount takes the event ids the order rows committed with (and
   * bulk_events) as the truth instead of the outbox table.
   */
  source?: 'table' | 'messages';
}

export interface ScenarioResult {
  name: string;
  passed: boolean;
  lost: number;
  duplicates: number;
  phantoms: number;
  recovery_seconds: number;
  detail: string;
  seconds: number;
  /** Checks that failed (empty when passed). */
  failed: string[];
  counts?: Omit<Counts, 'lostIds' | 'lsnViolationIds' | 'integrityExamples'>;
  [extra: string]: unknown;
}

interface Supervised {
  child: ChildProcess | null;
  restarts: number;
  output: string;
}

export class FaultRun {
  readonly run: string;
  readonly slot: string;
  readonly topic: string;
  readonly deadLetterTopic: string | null;
  readonly relays: RelayProcess[] = [];
  readonly monitor: SlotMonitor;
  readonly started = Date.now();
  writer: SteadyWriter | null = null;
  /** When the first fault was injected: before it, no duplicate may exist (I4). */
  faultsFrom: number | null = null;
  private consumer: Supervised | null = null;
  private readonly checks: Array<{ name: string; ok: boolean }> = [];
  private readonly notes: string[] = [];
  private closed = false;
  /** A deliberately broken relay ran (a negative control): its failure is expected, so its log is not printed. */
  private brokenRelay = false;
  /** What I12 looks for in the relays' output: their password, and any a scenario rotates to. */
  readonly secrets: string[] = [RELAY_PASSWORD];
  /** exactly-once: ids a correct relay's run holds twice read_committed, explained at close(). */
  private duplicateIds: string[] = [];
  readonly group: string;
  /** exactly-once runs: the offsets topic, and a collector that reads uncommitted records too. */
  readonly offsetsTopic: string | null;
  uncommitted: FaultCollector | null = null;

  private constructor(
    readonly options: FaultRunOptions,
    readonly db: TestDatabase,
    readonly admin: pg.Client,
    readonly collector: FaultCollector,
    names: { run: string; slot: string; topic: string; dlt: string | null },
  ) {
    this.run = names.run;
    this.slot = names.slot;
    this.topic = names.topic;
    this.deadLetterTopic = names.dlt;
    this.group = `${names.run}-shipping`;
    this.offsetsTopic = options.delivery === 'exactly-once' ? `${names.run}.offsets` : null;
    this.monitor = new SlotMonitor(db.url, names.slot).start();
  }

  static async create(options: FaultRunOptions): Promise<FaultRun> {
    const { fs } = options;
    const db = await createTestDatabase(fs.stack);
    const run = uniqueName(options.name.replace(/[^a-z0-9]/gi, '_').slice(0, 12));
    const slot = run;
    const topic = `${run}.order`;
    const dlt = options.deadLetter ? `${run}.dlt` : null;
    const admin = new pg.Client({ connectionString: db.url });
    admin.on('error', () => undefined);
    let collector: FaultCollector | null = null;
    try {
      await admin.connect();
      await prepareOrderTables(admin, options.source === 'messages' ? 'message' : 'table');
      await createSlot(db.url, slot);
      const kafkaAdmin = createKafka({ brokers: fs.brokers, clientId: 'faults-admin', logLevel: logLevel.NOTHING }).admin();
      await kafkaAdmin.connect();
      try {
        const logAppendTime = { name: 'message.timestamp.type', value: 'LogAppendTime' };
        await createTopicsAndWait(kafkaAdmin, [
          {
            topic,
            numPartitions: options.partitions ?? 3,
            configEntries: [logAppendTime, ...Object.entries(options.topicConfig ?? {}).map(([name, value]) => ({ name, value }))],
          },
          ...(dlt ? [{ topic: dlt, numPartitions: 1, configEntries: [logAppendTime] }] : []),
        ]);
        if (options.delivery === 'exactly-once') await createOffsetsTopic(kafkaAdmin, `${run}.offsets`);
      } finally {
        await kafkaAdmin.disconnect();
      }
      collector = await new FaultCollector(fs.brokers).start(dlt ? [topic, dlt] : [topic]);
      const r = new FaultRun(options, db, admin, collector, { run, slot, topic, dlt });
      if (r.offsetsTopic) r.uncommitted = await new FaultCollector(fs.brokers, { readUncommitted: true }).start([topic]);
      if (options.consumer) r.startConsumer();
      return r;
    } catch (error) {
      await collector?.stop();
      await admin.end().catch(() => undefined);
      await db.drop().catch(() => undefined);
      throw error;
    }
  }

  log(line: string): void {
    this.options.log(`[${this.options.name}] ${line}`);
  }

  // --- relays ---------------------------------------------------------------------

  /** The relay's database URL: with a password (I12), through the proxy when proxied. */
  get relayDatabaseUrl(): string {
    const u = new URL(this.options.proxied ? proxiedDatabaseUrl(this.options.fs, this.db.url) : this.db.url);
    u.username = RELAY_ROLE;
    u.password = RELAY_PASSWORD;
    return u.toString();
  }

  get relayBrokers(): string[] {
    return this.options.proxied ? this.options.fs.proxied.brokers : this.options.fs.brokers;
  }

  startRelay(env: Record<string, string> = {}, variant?: FaultVariant): RelayProcess {
    if (variant) this.brokenRelay = true;
    const nodeOptions = [
      `--max-old-space-size=${this.heapMb}`,
      ...(variant === 'no-keepalive-confirm' ? [`--import ${ROOT}test/faults/no-keepalive-confirm.mjs`] : []),
    ];
    // As in the crash suite's control: records wait 2 s to be batched, so a fault always finds some
    // that a relay confirming on receipt has confirmed and Kafka has not acknowledged.
    if (variant === 'confirm-on-receipt') env = { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000', ...env };
    const relay = startRelay({
      databaseUrl: this.relayDatabaseUrl,
      brokers: this.relayBrokers,
      slot: this.slot,
      env: {
        OUTBOX_TAIL_TOPIC: `${this.run}.{aggregate_type}`,
        ...(this.options.source === 'messages' ? { OUTBOX_TAIL_SOURCE: 'messages' } : {}),
        ...(this.offsetsTopic ? { OUTBOX_TAIL_DELIVERY: 'exactly-once', OUTBOX_TAIL_OFFSETS_TOPIC: this.offsetsTopic } : {}),
        ...(this.deadLetterTopic ? { OUTBOX_TAIL_DEAD_LETTER_TOPIC: this.deadLetterTopic } : {}),
        ...this.options.relayEnv,
        ...env,
        NODE_OPTIONS: nodeOptions.join(' '),
      },
      ...(variant && variant !== 'no-keepalive-confirm' ? { variant } : {}),
    });
    this.relays.push(relay);
    return relay;
  }

  alive(relay: RelayProcess): boolean {
    return relay.child.exitCode === null && relay.child.signalCode === null;
  }

  peakRssMb(): number {
    return Math.max(0, ...this.relays.map((r) => r.peakRssMb()));
  }

  /** The V8 heap cap of this run's relays (I11). */
  get heapMb(): number {
    return this.offsetsTopic ? RELAY_HEAP_MB_EXACTLY_ONCE : RELAY_HEAP_MB;
  }

  /** I11: no relay ran out of its capped heap, and none grew past the RSS ceiling (checks named for what they found). */
  checkMemoryBounded(): number {
    const oom = this.relays.filter((r) => /heap out of memory|Reached heap limit/.test(r.stderr())).map((r) => r.pid);
    this.check(`I11 every relay ran within a ${this.heapMb} MB heap (out of memory: ${oom.length ? oom.join(', ') : 'none'})`, oom.length === 0);
    const peak = this.peakRssMb();
    this.check(`I11 relay peak RSS ${peak.toFixed(0)} MB < ${RELAY_RSS_CEILING_MB} MB`, peak < RELAY_RSS_CEILING_MB);
    return peak;
  }

  /** `restart` log lines of a relay: the supervisor's reconnects. */
  restarts(relay: RelayProcess): Array<{ code: string; attempt: number; delayMs: number }> {
    return relay.logs.filter((l) => l.event === 'restart').map((l) => ({ code: String(l.code), attempt: Number(l.attempt), delayMs: Number(l.delayMs) }));
  }

  // --- writer -----------------------------------------------------------------------

  startWriter(options: Partial<WriterOptions> = {}): SteadyWriter {
    this.writer = new SteadyWriter({ databaseUrl: this.db.url, ratePerSecond: 40, marker: this.marker, via: this.via, ...options }).start();
    return this.writer;
  }

  /** How this run's events are written: outbox rows, or messages (--source messages). */
  get via(): EventVia {
    return this.options.source === 'messages' ? 'message' : 'table';
  }

  /** The note of the writer's OrderCreated payloads (the messages recount rebuilds them). */
  get writerNote(): string {
    return this.writer?.note ?? writerNote(this.marker);
  }

  /** In every payload; never in a relay log (I12). */
  get marker(): string {
    return `mk-${this.run}-`;
  }

  // --- consumer (I3) --------------------------------------------------------------------

  private startConsumer(): void {
    const sup: Supervised = { child: null, restarts: -1, output: '' };
    this.consumer = sup;
    const spawnOne = () => {
      if (this.closed) return;
      sup.restarts++;
      const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}test/crash/consumer-process.ts`, 'idempotent'], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/root',
          CRASH_BROKERS: this.options.fs.brokers.join(','),
          CRASH_DATABASE_URL: this.db.url,
          CRASH_TOPIC: this.topic,
          CRASH_GROUP: this.group,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      sup.child = child;
      const keep = (c: Buffer) => (sup.output = (sup.output + c.toString()).slice(-4000));
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      // A supervisor (systemd, Kubernetes) restarts a consumer that a fault took down.
      child.once('exit', () => {
        if (sup.child === child) sup.child = null;
        if (!this.closed) setTimeout(spawnOne, 500);
      });
    };
    spawnOne();
  }

  private async stopConsumer(): Promise<void> {
    const child = this.consumer?.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  // --- waiting ----------------------------------------------------------------------------

  async committedIds(): Promise<string[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.query<{ id: string }>(committedIdsSql(this.via))).map((r) => r.id);
      } catch (error) {
        if (attempt > 100) throw error;
        await sleep(200);
      }
    }
  }

  /** A query on a short-lived connection (the admin connection does not survive a Postgres restart). */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.db.url, connectionTimeoutMillis: 5_000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Waits until every id is in Kafka (topic or dead-letter topic); throws after timeoutMs. */
  async waitDelivered(ids: readonly string[], timeoutMs: number, what = 'committed ids'): Promise<void> {
    timeoutMs = this.options.patienceMs ?? timeoutMs;
    let i = 0;
    const seen = this.collector.distinctIds();
    await this.collector.waitUntil(
      () => {
        while (i < ids.length && seen.has(ids[i]!)) i++;
        return i >= ids.length;
      },
      timeoutMs,
      `${ids.length} ${what} (${ids.length - i} missing, first ${ids[i]})`,
    );
  }

  /**
   * I8 after a heal at `healedAt`: everything committed by now reaches Kafka
   * within the bound. Returns the seconds from the heal to full delivery.
   */
  async recovered(healedAt: number, boundMs = 120_000): Promise<number> {
    const ids = await this.committedIds();
    await this.waitDelivered(ids, this.options.patienceMs ?? boundMs);
    // Measured on Kafka's clock (LogAppendTime), not on when the collector read them.
    const want = new Set(ids);
    const appended = new Map<string, number>();
    for (const r of this.collector.records) {
      const id = r.headers.id;
      if (id && want.has(id)) appended.set(id, Math.min(appended.get(id) ?? Infinity, r.timestamp));
    }
    const last = Math.max(healedAt, ...appended.values());
    this.log(
      `recovery: last id appended ${((last - healedAt) / 1000).toFixed(1)} s after the heal, read by the collector after ${((Date.now() - healedAt) / 1000).toFixed(1)} s`,
    );
    return (last - healedAt) / 1000;
  }

  /** The slot's confirmed position reaches the WAL position of now (slot lag back to its baseline). */
  async waitCaughtUp(timeoutMs = 60_000): Promise<void> {
    timeoutMs = this.options.patienceMs ?? timeoutMs;
    const [{ lsn }] = (await this.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')) as [{ lsn: string }];
    const target = Lsn.parse(lsn);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.monitor.sample().catch(() => null);
      if (s?.confirmed != null && s.confirmed >= target) return;
      if (Date.now() > deadline) throw new Error(`slot ${this.slot} did not catch up to ${lsn} within ${timeoutMs} ms (confirmed ${s?.confirmed})`);
      await sleep(200);
    }
  }

  // --- checks and result --------------------------------------------------------------------

  check(name: string, ok: boolean): boolean {
    this.checks.push({ name, ok });
    if (!ok) this.log(`CHECK FAILED: ${name}`);
    return ok;
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** I12: no password and no payload in any relay's logs, stderr or argv. */
  secretsLeaked(): string[] {
    const found: string[] = [];
    for (const r of this.relays) {
      const text = `${r.logs.map((l) => JSON.stringify(l)).join('\n')}\n${r.stderr()}`;
      let argv = '';
      try {
        argv = readFileSync(`/proc/${r.pid}/cmdline`, 'utf8');
      } catch {
        /* exited */
      }
      for (const secret of this.secrets)
        if (text.includes(secret) || argv.includes(secret)) found.push(`password ${this.secrets.indexOf(secret)} in relay ${r.pid} output`);
      if (text.includes(this.marker)) found.push(`payload in relay ${r.pid} output`);
    }
    return found;
  }

  /** Stops the writer, waits for full delivery and a caught-up slot, then recounts. */
  async settle(options: { deliveryBoundMs?: number; catchUp?: boolean } = {}): Promise<Counts> {
    if (this.writer) await this.writer.stop();
    const ids = await this.committedIds();
    const delivered = await this.waitDelivered(ids, this.options.patienceMs ?? options.deliveryBoundMs ?? 120_000).then(
      () => true,
      (e: Error) => (this.log(e.message), false),
    );
    this.check('I8 everything committed was delivered within the bound', delivered);
    if (options.catchUp !== false && delivered) {
      const caughtUp = await this.waitCaughtUp().then(
        () => true,
        (e: Error) => (this.log(e.message), false),
      );
      this.check('I8 slot lag back to baseline (confirmed_flush_lsn reached the WAL end)', caughtUp);
    }
    return this.count();
  }

  async count(): Promise<Counts> {
    let effects: Map<string, number> | undefined;
    if (this.consumer) {
      const deadline = Date.now() + 300_000;
      const created = (await this.query<{ id: string }>(committedEventIdsSql(this.via, 'OrderCreated'))).map((r) => r.id);
      // Everything in the consumer's topic gets processed (dead-lettered rows are not in it).
      const inTopic = new Set(
        uniqueRecords(this.collector.records)
          .filter((r) => r.topic === this.topic && r.headers.id)
          .map((r) => r.headers.id!),
      ).size;
      // One transaction per record is slow: wait as long as the consumer makes progress.
      let last = -1;
      let progressAt = Date.now();
      for (;;) {
        const [p] = await this.query<{ n: string }>('select count(*) as n from processed_messages where consumer_group = $1', [this.group]);
        const n = Number(p!.n);
        if (n >= inTopic) break;
        if (n !== last) {
          last = n;
          progressAt = Date.now();
        }
        if (Date.now() - progressAt > 60_000 || Date.now() > deadline) {
          this.log(
            `consumer: ${n} of ${inTopic} processed, no progress for 60 s (restarts ${this.consumer.restarts}); output:\n${this.consumer.output.slice(-1500)}`,
          );
          break;
        }
        await sleep(300);
      }
      effects = new Map();
      const processed = await this.query<{ message_id: string }>('select message_id from processed_messages where consumer_group = $1', [this.group]);
      for (const p of processed) effects.set(p.message_id, 1);
      // An OrderCreated's effect is its shipment: exactly one per id.
      const ships = await this.query<{ event_id: string; n: string }>('select event_id, count(*) as n from shipments group by event_id');
      const shipCount = new Map(ships.map((s) => [s.event_id, Number(s.n)]));
      for (const id of created) effects.set(id, shipCount.get(id) ?? 0);
    }
    const committedRows = (client: pg.ClientBase) => (this.via === 'message' ? messageEventRows(client, this.writerNote) : outboxRows(client));
    const rows = await committedRows(this.admin).catch(async () => {
      const client = new pg.Client({ connectionString: this.db.url });
      await client.connect();
      try {
        return await committedRows(client);
      } finally {
        await client.end();
      }
    });
    return recount({
      rows,
      records: uniqueRecords(this.collector.records),
      topic: this.topic,
      ...(this.deadLetterTopic ? { deadLetterTopic: this.deadLetterTopic } : {}),
      samples: this.monitor.samples,
      ...(effects ? { effects } : {}),
    });
  }

  /** The standard invariant checks on a recount; `expect` relaxes what a scenario allows. */
  checkCounts(c: Counts, expect: { duplicates?: 'none' | 'allowed'; deadLettered?: number } = {}): void {
    this.check(`I1 no loss (lost ${c.lost}${c.lostIds.length ? `: ${c.lostIds.slice(0, 3).join(', ')}` : ''})`, c.lost === 0);
    this.check(`I2 no phantom (phantoms ${c.phantoms})`, c.phantoms === 0);
    if (c.effect_violations !== null) this.check(`I3 effects exactly once (violations ${c.effect_violations})`, c.effect_violations === 0);
    if (this.offsetsTopic) {
      this.check(`exactly-once: no duplicate read_committed (duplicates ${c.duplicates})`, c.duplicates === 0);
      if (c.duplicates > 0 && !this.brokenRelay) this.duplicateIds = duplicatedIds(uniqueRecords(this.collector.records), this.topic).slice(0, 5);
    }
    if (expect.duplicates === 'none') this.check(`I4 no duplicates without a fault (duplicates ${c.duplicates})`, c.duplicates === 0);
    else if (this.faultsFrom !== null) {
      const from = this.faultsFrom;
      const early = uniqueRecords(this.collector.records).filter((r) => r.timestamp < from && r.headers.id);
      const dups = early.length - new Set(early.map((r) => `${r.topic}\u0000${r.headers.id}`)).size;
      this.check(`I4 no duplicates before the first fault (${dups} among ${early.length} records)`, dups === 0);
    }
    this.check(`I5 per-key order (violations ${c.order_violations})`, c.order_violations === 0);
    this.check(
      `I6 integrity (violations ${c.integrity_violations}${c.integrityExamples.length ? `: ${c.integrityExamples.join('; ')}` : ''})`,
      c.integrity_violations === 0,
    );
    this.check(`I7 LSN safety (confirmed past an unacknowledged transaction: ${c.lsn_violations})`, c.lsn_violations === 0);
    if (expect.deadLettered !== undefined)
      this.check(`I10 dead-lettered with a reason: ${c.dead_lettered} of ${expect.deadLettered}`, c.dead_lettered === expect.deadLettered);
    const leaks = this.secretsLeaked();
    this.check(`I12 no secret or payload in relay logs/argv${leaks.length ? ` (${leaks.join('; ')})` : ''}`, leaks.length === 0);
  }

  /** exactly-once runs: what a read_uncommitted consumer saw, and how many of those records no committed read has (aborted Kafka transactions). */
  readUncommittedView(): { records: number; aborted: number } | null {
    if (!this.uncommitted) return null;
    const key = (r: CollectedRecord) => `${r.topic}\u0000${r.partition}\u0000${r.offset}`;
    const committed = new Set(this.collector.records.map(key));
    const all = uniqueRecords(this.uncommitted.records);
    return { records: all.length, aborted: all.filter((r) => !committed.has(key(r))).length };
  }

  /**
   * A correct relay failed a check: print what its sessions did (starts, watermarks, skips, restarts, warnings and
   * errors), so a failure seen once in CI can be explained from its output alone.
   */
  private printRelayStory(): void {
    const events = new Set(['streaming', 'watermark', 'skipped-published', 'restart', 'drained', 'slot-created']);
    const lines = this.relays.flatMap((relay, i) =>
      relay.logs
        .filter((l) => (typeof l.event === 'string' && events.has(l.event)) || l.level === 'warn' || l.level === 'error' || l.level === 'fatal')
        .map((l) => `  relay ${i} (pid ${relay.pid}): ${JSON.stringify(l)}`),
    );
    const shown = lines.length > 300 ? [...lines.slice(0, 100), `  ... ${lines.length - 300} lines left out ...`, ...lines.slice(-200)] : lines;
    console.log(
      [`[${this.options.name}] the relays' story (${lines.length} lines: starts, watermarks, skips, restarts, warnings, errors):`, ...shown].join('\n'),
    );
  }

  result(c: Counts | null, recoverySeconds: number, extra: Record<string, unknown> = {}): ScenarioResult {
    const uncommitted = this.readUncommittedView();
    if (this.via === 'message' && this.writer)
      this.note(
        `events as messages: ${this.writer.stats.rolledBack} rolled-back transactions and ${this.writer.stats.savepointRollbacks} savepoint rollbacks never to be sent`,
      );
    if (uncommitted) this.note(`read_uncommitted: ${uncommitted.records} records, ${uncommitted.aborted} of aborted Kafka transactions`);
    const failed = this.checks.filter((k) => !k.ok).map((k) => k.name);
    if (failed.length > 0 && !this.brokenRelay) this.printRelayStory();
    const countsText = c
      ? `committed ${c.committed}, kafka records ${c.kafka_records}, delivered ${c.delivered}, dead-lettered ${c.dead_lettered}, duplicates ${c.duplicates}, order violations ${c.order_violations}, integrity violations ${c.integrity_violations}, lsn violations ${c.lsn_violations}${c.effect_violations !== null ? `, effect violations ${c.effect_violations}` : ''}`
      : '';
    const detail = [countsText, ...this.notes, failed.length ? `FAILED: ${failed.join(' | ')}` : `${this.checks.length} checks passed`]
      .filter(Boolean)
      .join('; ');
    const { lostIds: _l, lsnViolationIds: _v, integrityExamples: _e, ...counts } = c ?? ({} as Counts);
    return {
      name: this.options.name,
      passed: failed.length === 0 && this.checks.length > 0,
      lost: c?.lost ?? 0,
      duplicates: c?.duplicates ?? 0,
      phantoms: c?.phantoms ?? 0,
      recovery_seconds: Number(recoverySeconds.toFixed(1)),
      detail,
      seconds: Number(((Date.now() - this.started) / 1000).toFixed(1)),
      failed,
      ...(c ? { counts } : {}),
      ...(uncommitted ? { read_uncommitted: uncommitted } : {}),
      ...extra,
    };
  }

  /**
   * A correct exactly-once relay left an id twice in the committed view: where each copy sits, which producer epoch wrote
   * it, whether a read_uncommitted reader has it, and how many copies a second, fresh read_committed reader finds. One
   * copy in the fresh reader means the first reader let an aborted record through (a client's filter), not the relay.
   */
  private async explainDuplicates(): Promise<void> {
    const ids = new Set(this.duplicateIds);
    const where = (records: readonly CollectedRecord[]) => uniqueRecords(records).filter((r) => r.topic === this.topic && ids.has(r.headers.id ?? ''));
    const uncommitted = new Set(where(this.uncommitted?.records ?? []).map((r) => `${r.partition}@${r.offset}`));
    const fresh = await new FaultCollector(this.options.fs.brokers).start([this.topic]);
    try {
      let seen = -1;
      for (let i = 0; i < 40 && fresh.records.length !== seen; i++) {
        seen = fresh.records.length;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const lines = where(this.collector.records).map(
        (r) =>
          `  id ${r.headers.id}: partition ${r.partition} offset ${r.offset} producer ${r.producer ?? '?'} appended ${new Date(r.timestamp).toISOString()}` +
          `${uncommitted.has(`${r.partition}@${r.offset}`) ? '' : ' (not seen read_uncommitted)'}`,
      );
      const again = where(fresh.records);
      lines.push(
        `  a fresh read_committed reader (${fresh.records.length} records) finds ${again.length} copies of these ${ids.size} id(s): ${again.map((r) => `${r.partition}@${r.offset}`).join(', ')}`,
      );
      this.log(`duplicates read_committed, copy by copy:\n${lines.join('\n')}`);
    } finally {
      await fresh.stop();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.duplicateIds.length > 0) await this.explainDuplicates().catch((e: Error) => this.log(`explaining the duplicates failed: ${e.message}`));
    await this.writer?.stop().catch(() => undefined);
    await Promise.all(this.relays.map((r) => r.kill('SIGKILL')));
    await this.stopConsumer();
    await this.monitor.stop();
    await this.collector.stop();
    await this.uncommitted?.stop();
    await this.admin.end().catch(() => undefined);
    await this.db.drop().catch((e: Error) => this.log(`dropping ${this.db.name}: ${e.message}`));
  }
}

/** Ids that `topic` holds more than once. */
function duplicatedIds(records: readonly CollectedRecord[], topic: string): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const r of records) {
    const id = r.headers.id;
    if (r.topic !== topic || !id) continue;
    if (seen.has(id)) twice.add(id);
    seen.add(id);
  }
  return [...twice];
}

/** The collector re-reads from the start after a group rejoin: keep each Kafka record once (topic, partition, offset). */
export function uniqueRecords(records: readonly CollectedRecord[]): CollectedRecord[] {
  const seen = new Set<string>();
  const out: CollectedRecord[] = [];
  for (const r of records) {
    const key = `${r.topic}\u0000${r.partition}\u0000${r.offset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}
