/**
 * Deliberately broken relays for the regression zoo (docs/regression-zoo.md),
 * each with the bug another relay shipped, built in test code only, plus the
 * test-only knobs the zoo's scenarios need to build their shapes. The zoo's
 * tests (test/integration/regression-zoo*.test.ts) must catch each variant.
 *
 * Knobs (env of the variant process, read at start):
 * - OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP=1: kill -9 the relay right after Kafka
 *   acknowledged an event whose LSN is shared by an event of the same
 *   transaction not yet acknowledged (a COPY's rows share their page's LSN).
 * - OUTBOX_TAIL_TEST_HOLD_KAFKA=1: Kafka never acknowledges this relay's
 *   records (send() never settles), as if the broker could not answer; each
 *   send prints `zoo-kafka-held <count> <topic>@<commit_lsn> ...`.
 * - OUTBOX_TAIL_TEST_REPORT_KEEPALIVES=1: after each keepalive, the next time
 *   the status sender reads the safe LSN is written to stderr
 *   (`zoo-status-after-keepalive <keepalive LSN> <safe LSN>`): the relay had its
 *   chance to confirm what the walsender reported.
 * - OUTBOX_TAIL_TEST_STATE_FILE: where skip-same-lsn-after-restart keeps its
 *   per-event position across restarts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { LogicalReplicationService } from 'pg-logical-replication';
import { Checkpointer } from '../../src/pipeline/checkpoint/checkpointer.js';
import type { Transaction } from '../../src/pipeline/outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';
import { StatusSender } from '../../src/pipeline/checkpoint/status-sender.js';
import { createKafkaSink, type SinkFactory, type SinkSettings } from '../../src/sink/create-sink.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { isTransactional, type Sink, type TransactionalSink } from '../../src/sink/sink.js';

const say = (line: string) => process.stderr.write(`${line}\n`);

/**
 * Calls `observe` with every XLogData message before the relay decodes it;
 * `observe` returning true drops the message. Interceptors installed later
 * see the stream first.
 */
function interceptStream(observe: (lsn: Lsn, message: { tag?: string }) => boolean): void {
  const emit = LogicalReplicationService.prototype.emit;
  LogicalReplicationService.prototype.emit = function (this: LogicalReplicationService, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') {
      const [lsn, message] = args as [string, { tag?: string }];
      if (observe(Lsn.parse(lsn), message)) return true;
    }
    return emit.call(this, event, ...args);
  } as typeof emit;
}

/**
 * The XLogData LSN of every outbox row the relay decoded, per transaction, in
 * stream order. The publication carries the outbox table only, so every
 * Insert is an outbox row and becomes one item of its transaction.
 */
class RowLsns {
  private open: Lsn[] = [];
  private readonly byTxn = new Map<Transaction, Lsn[]>();
  constructor() {
    interceptStream((lsn, message) => {
      if (message.tag === 'begin') this.open = [];
      else if (message.tag === 'insert') this.open.push(lsn);
      return false;
    });
  }
  /** Called while the Begin is being decoded: the rows that follow belong to `txn`. */
  bind(txn: Transaction): void {
    this.byTxn.set(txn, this.open);
  }
  /** `count` more rows of `txn` acknowledged (one key, one partition: in order). */
  acknowledge(txn: Transaction, count: number): { last: Lsn | null; sharedByUnacked: number } {
    const rows = this.byTxn.get(txn) ?? [];
    const last = rows.splice(0, count).at(-1) ?? null;
    return { last, sharedByUnacked: last === null ? 0 : rows.filter((l) => l === last).length };
  }
}

/** Sees every acknowledgement with the LSN of the last row it covered. */
class RowAckCheckpointer extends Checkpointer {
  private acked = 0;
  constructor(
    private readonly rows: RowLsns,
    private readonly onAck: (last: Lsn, sharedByUnacked: number, acked: number) => void,
  ) {
    super();
  }
  override begin(txn: Transaction): void {
    this.rows.bind(txn);
    super.begin(txn);
  }
  override acknowledged(txn: Transaction, count = 1): void {
    super.acknowledged(txn, count);
    this.acked += count;
    const { last, sharedByUnacked } = this.rows.acknowledge(txn, count);
    if (last !== null) this.onAck(last, sharedByUnacked, this.acked);
  }
}

/** OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP: a kill -9 inside a same-LSN group, the crash the DBZ-1554 shape needs. */
function killInsideLsnGroup(last: Lsn, sharedByUnacked: number, acked: number): void {
  if (process.env.OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP !== '1' || sharedByUnacked === 0) return;
  say(`zoo-kill-mid-lsn-group acked=${acked} lsn=${Lsn.format(last)} shared-by-unacked=${sharedByUnacked}`);
  process.kill(process.pid, 'SIGKILL');
}

/** The correct relay, with the kill knob (its control run in the DBZ-1554 scenario). */
export function correctWithRowAcks(): () => Checkpointer {
  const rows = new RowLsns();
  return () => new RowAckCheckpointer(rows, killInsideLsnGroup);
}

/**
 * DBZ-1554 (debezium/debezium#7531): the position kept is the LSN of the last
 * event delivered, and on restart every replayed event at or below it counts
 * as already processed (isLastEventForLsn() always true). A COPY writes one
 * WAL record per heap page, so its rows share LSNs: after a crash inside such
 * a group, the group's undelivered rows are skipped.
 */
function skipSameLsnAfterRestart(): () => Checkpointer {
  const file = process.env.OUTBOX_TAIL_TEST_STATE_FILE;
  if (!file) throw new Error('skip-same-lsn-after-restart needs OUTBOX_TAIL_TEST_STATE_FILE');
  const stored = existsSync(file) ? Lsn.parse(readFileSync(file, 'utf8').trim()) : null;
  const rows = new RowLsns();
  if (stored !== null) {
    say(`skip-same-lsn-after-restart: replayed rows at or below ${Lsn.format(stored)} count as processed`);
    let locating = true;
    let skipped = 0;
    // Installed after RowLsns: dropped rows never reach the relay (nor its row count).
    interceptStream((lsn, message) => {
      if (!locating || message.tag !== 'insert') return false;
      if (lsn <= stored) {
        skipped++;
        return true;
      }
      locating = false;
      say(`skip-same-lsn-after-restart: skipped ${skipped} replayed row(s)`);
      return false;
    });
  }
  return () =>
    new RowAckCheckpointer(rows, (last, sharedByUnacked, acked) => {
      writeFileSync(file, Lsn.format(last));
      killInsideLsnGroup(last, sharedByUnacked, acked);
    });
}

/**
 * A restart filter of the WalPositionLocator kind, per change (DBZ-5915,
 * FLINK-39265): on start the slot's confirmed_flush_lsn is taken as the last
 * event processed, and every replayed change whose XLogData LSN is at or
 * below it is dropped as "already processed". A transaction whose first
 * record starts exactly at the confirmed LSN (the previous commit's end) has
 * its Begin and first row at that LSN: the row right after BEGIN is lost.
 */
async function skipChangeAtResumeLsn(databaseUrl: string, slot: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let resume: Lsn;
  try {
    const { rows } = await client.query<{ lsn: string | null }>('select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [
      slot,
    ]);
    resume = rows[0]?.lsn ? Lsn.parse(rows[0].lsn) : Lsn.of(0n);
  } finally {
    await client.end();
  }
  say(`skip-change-at-resume-lsn: replayed changes at or below ${Lsn.format(resume)} count as processed`);
  interceptStream((lsn, message) => {
    if (message.tag !== 'insert' || lsn > resume) return false;
    say(`skip-change-at-resume-lsn: dropped the row at ${Lsn.format(lsn)}`);
    return true;
  });
}

/**
 * apache/seatunnel#11864 (and Trendyol/go-pq-cdc#107): the position flushed
 * to the slot is the streaming position, the walsender's (each keepalive's),
 * not the end of the last transaction Kafka acknowledged: a transaction in
 * flight is confirmed before it is delivered.
 */
class ConfirmStreamingPositionCheckpointer extends Checkpointer {
  private streaming = Lsn.of(0n);
  override keepalive(lsn: Lsn): void {
    super.keepalive(lsn);
    this.streaming = Lsn.max(this.streaming, lsn);
  }
  override get safeLsn(): Lsn {
    return Lsn.max(super.safeLsn, this.streaming);
  }
}

/** OUTBOX_TAIL_TEST_REPORT_KEEPALIVES: the first safe-LSN read after each keepalive goes to stderr. */
function reportingKeepalives(make: () => Checkpointer): () => Checkpointer {
  return () => {
    const inner = make();
    let pending: Lsn | null = null;
    const keepalive = inner.keepalive.bind(inner);
    inner.keepalive = (lsn: Lsn) => {
      keepalive(lsn);
      pending = lsn;
    };
    const proto = Object.getPrototypeOf(inner) as object;
    const read = (): Lsn => {
      for (let p: object | null = proto; p; p = Object.getPrototypeOf(p) as object | null) {
        const getter = Object.getOwnPropertyDescriptor(p, 'safeLsn')?.get;
        if (getter) return getter.call(inner) as Lsn;
      }
      throw new Error('no safeLsn getter');
    };
    Object.defineProperty(inner, 'safeLsn', {
      get() {
        const safe = read();
        if (pending !== null) {
          say(`zoo-status-after-keepalive ${Lsn.format(pending)} ${Lsn.format(safe)}`);
          pending = null;
        }
        return safe;
      },
    });
    return inner;
  };
}

/** OUTBOX_TAIL_TEST_HOLD_KAFKA: the broker never answers this relay's produce requests. */
class HeldSink implements Sink {
  constructor(private readonly inner: Sink) {}
  connect() {
    return this.inner.connect();
  }
  disconnect() {
    return this.inner.disconnect();
  }
  metadata(topics?: readonly string[]) {
    return this.inner.metadata(topics);
  }
  send(records: readonly SinkRecord[]): Promise<void> {
    // Each held transaction's commit LSN (the Commit record's start), per topic: the test's bound for a safe confirm.
    const held = new Set(records.map((r) => `${r.topic}@${r.headers.commit_lsn ?? '?'}`));
    say(`zoo-kafka-held ${records.length} ${[...held].join(' ')}`);
    return new Promise<void>(() => undefined);
  }
}

const heldSinkFactory: SinkFactory = (config: SinkSettings, logger: Logger) => new HeldSink(createKafkaSink(config, logger));

/**
 * Trendyol/go-pq-cdc#148: on a graceful stop the relay publishes what is in
 * flight but sends no final standby status update, so PostgreSQL keeps the
 * old confirmed_flush_lsn and the next start republishes all of it. Made by
 * replacing our StatusSender's final flush in this process only.
 */
function skipFinalStatusUpdate(): void {
  StatusSender.prototype.flush = function (this: StatusSender) {
    const { frontier } = (this as unknown as { options: { frontier: { safeLsn: Lsn } } }).options;
    say('no-final-status-update: skipped the final standby status update');
    return Promise.resolve({ lsn: frontier.safeLsn, serverReplied: false });
  };
}

/**
 * DBZ-5739 (debezium/debezium#3970): the slot was dropped and created anew
 * while the relay was down, and the relay trusts the slot's position over its
 * own: a watermark behind the slot's confirmed_flush_lsn is taken as caught up
 * to it (so the watermark check passes), and whatever was committed while no
 * slot existed is never published. Exactly-once only: that mode keeps a
 * position outside the slot to compare with.
 */
function trustSlotPosition(where: { databaseUrl: string; slot: string }): SinkFactory {
  return (config, logger) => {
    const inner = createKafkaSink(config, logger);
    if (!isTransactional(inner)) throw new Error('trust-slot-position needs --delivery exactly-once');
    const readWatermark: TransactionalSink['readWatermark'] = async () => {
      const watermark = await inner.readWatermark();
      if (!watermark) return watermark;
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: where.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ lsn: string | null }>('select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [
          where.slot,
        ]);
        const confirmed = rows[0]?.lsn ? Lsn.parse(rows[0].lsn) : null;
        if (confirmed === null || confirmed <= watermark.lsn) return watermark;
        say(`trust-slot-position: watermark ${Lsn.format(watermark.lsn)} is behind the slot (${Lsn.format(confirmed)}); resuming at the slot`);
        return { ...watermark, lsn: confirmed };
      } finally {
        await client.end();
      }
    };
    return new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'readWatermark') return readWatermark;
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
}

export interface ZooExtras {
  checkpointerFactory?: () => Checkpointer;
  sinkFactory?: SinkFactory;
}

export const ZOO_VARIANTS = [
  'skip-same-lsn-after-restart',
  'skip-change-at-resume-lsn',
  'confirm-streaming-position',
  'no-final-status-update',
  'trust-slot-position',
] as const;

/**
 * The extras of a zoo variant, or of the correct relay with the zoo's knobs
 * (`correct`), for test/support/relay-variant.ts; null for any other variant.
 */
export async function zooExtras(
  variant: string,
  base: (() => Checkpointer) | undefined,
  where: { databaseUrl: string; slot: string },
): Promise<ZooExtras | null> {
  const zoo = (ZOO_VARIANTS as readonly string[]).includes(variant);
  const knobs = ['OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP', 'OUTBOX_TAIL_TEST_HOLD_KAFKA', 'OUTBOX_TAIL_TEST_REPORT_KEEPALIVES'].some(
    (k) => process.env[k] === '1',
  );
  if (!zoo && !(variant === 'correct' && knobs)) return null;
  let checkpointerFactory: (() => Checkpointer) | undefined = base;
  if (variant === 'skip-same-lsn-after-restart') checkpointerFactory = skipSameLsnAfterRestart();
  else if (variant === 'correct' && process.env.OUTBOX_TAIL_TEST_KILL_MID_LSN_GROUP === '1') checkpointerFactory = correctWithRowAcks();
  else if (variant === 'confirm-streaming-position') checkpointerFactory = () => new ConfirmStreamingPositionCheckpointer();
  else if (variant === 'skip-change-at-resume-lsn') await skipChangeAtResumeLsn(where.databaseUrl, where.slot);
  else if (variant === 'no-final-status-update') skipFinalStatusUpdate();
  if (process.env.OUTBOX_TAIL_TEST_REPORT_KEEPALIVES === '1') checkpointerFactory = reportingKeepalives(checkpointerFactory ?? (() => new Checkpointer()));
  const sinkFactory =
    variant === 'trust-slot-position' ? trustSlotPosition(where) : process.env.OUTBOX_TAIL_TEST_HOLD_KAFKA === '1' ? heldSinkFactory : undefined;
  return {
    ...(checkpointerFactory ? { checkpointerFactory } : {}),
    ...(sinkFactory ? { sinkFactory } : {}),
  };
}
