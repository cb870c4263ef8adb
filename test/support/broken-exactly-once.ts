import type { Logger } from 'pino';
import type { SkipRule } from '../../src/pipeline/publish/skip-published.js';
import type { Watermark } from '../../src/sink/watermark.js';
import { isTransactional, type Sealed, type TransactionalSink, type WatermarkPosition } from '../../src/sink/sink.js';
import { createKafkaSink, type SinkFactory, type SinkSettings } from '../../src/sink/create-sink.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';

/**
 * Deliberately broken exactly-once relays, built from the library's parts in
 * test code only. The exactly-once crash test must catch each of them.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function transactionalSink(config: SinkSettings, logger: Logger): TransactionalSink {
  const sink = createKafkaSink(config, logger);
  if (!isTransactional(sink)) throw new Error('the exactly-once variants need --delivery exactly-once');
  return sink;
}

/** seal() of a variant that commits in one step: its commit() decides what is broken. */
async function sealByCommitting(sink: Pick<TransactionalSink, 'commit'>, position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<Sealed> {
  await sink.commit(position, records);
  return { committed: Promise.resolve() };
}

/** Delegates everything; subclasses break commit(). */
abstract class SinkWrapper implements TransactionalSink {
  readonly transactional = true as const;
  constructor(protected readonly inner: TransactionalSink) {}
  connect() {
    return this.inner.connect();
  }
  disconnect() {
    return this.inner.disconnect();
  }
  metadata(topics?: readonly string[]) {
    return this.inner.metadata(topics);
  }
  readWatermark() {
    return this.inner.readWatermark();
  }
  send(records: readonly SinkRecord[]) {
    return this.inner.send(records);
  }
  abort() {
    return this.inner.abort();
  }
  /** `records`: the Kafka transaction's last batch, which the real sink sends with the watermark. */
  abstract commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void>;
  /** Through the broken commit(), in one step. */
  seal(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<Sealed> {
    return sealByCommitting(this, position, records);
  }
}

/**
 * Commits the records with the previous watermark unchanged, then writes the
 * new watermark in a Kafka transaction of its own, a little later: a kill in
 * between leaves records in Kafka beyond the watermark (duplicates at replay).
 */
class WatermarkAfterCommitSink extends SinkWrapper {
  private previous: Watermark | null = null;
  override async readWatermark() {
    this.previous = await this.inner.readWatermark();
    return this.previous;
  }
  async commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void> {
    const unchanged = this.previous;
    this.previous = { ...position, slot: '', transactionalId: '', relayId: '' };
    // The slot's very first Kafka transaction has no watermark to repeat: it is written correctly.
    if (!unchanged) return this.inner.commit(position, records);
    await this.inner.commit({ lsn: unchanged.lsn, commitLsn: unchanged.commitLsn, commitTime: unchanged.commitTime, count: position.count }, records);
    await sleep(300);
    await this.inner.commit({ ...position, count: 0 });
  }
}

/**
 * Reports the Kafka transaction committed at once and commits it half a
 * second later: the stage acknowledges and PostgreSQL is confirmed before
 * Kafka committed, so a kill in between loses the records.
 */
class ConfirmBeforeCommitSink extends SinkWrapper {
  private pending: Promise<void> = Promise.resolve();
  override async send(records: readonly SinkRecord[]) {
    await this.pending;
    return this.inner.send(records);
  }
  async commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void> {
    await this.pending;
    // The records as before: sent now, committed later.
    if (records?.length) await this.inner.send(records);
    this.pending = sleep(500).then(() => this.inner.commit(position));
    this.pending.catch(() => undefined);
  }
}

/**
 * Not broken by itself: holds every Kafka transaction open for a while after
 * its records were sent, then commits it, and lets disconnect() wait for that
 * commit. It widens the window in which a relay paused (SIGSTOP) is a zombie
 * with a transaction it still means to commit, so the zombie-fencing test can
 * pause it inside that window every run (it waits for the `zombie-window`
 * line on stderr) and see what the woken zombie's commit does
 * (`zombie-commit ok` or `zombie-commit failed <code>`).
 */
class SlowCommitSink extends SinkWrapper {
  private pending: Promise<void> = Promise.resolve();
  override async disconnect() {
    await this.pending.catch(() => undefined);
    return this.inner.disconnect();
  }
  async commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void> {
    // Records sent, commit pending: the window the zombie is paused in.
    if (records?.length) await this.inner.send(records);
    process.stderr.write(`zombie-window ${position.lsn}\n`);
    const done = sleep(SLOW_COMMIT_MS).then(() => this.inner.commit(position));
    this.pending = done;
    try {
      await done;
      process.stderr.write('zombie-commit ok\n');
    } catch (error) {
      process.stderr.write(`zombie-commit failed ${(error as { code?: string }).code ?? (error as Error).message}\n`);
      throw error;
    }
  }
}

const SLOW_COMMIT_MS = 1_500;

/**
 * A relay without the start checks: it reads past an offsets topic that is
 * missing or not compacted, and past a transactional id that already publishes
 * for another slot (E6), as if there were no watermark yet.
 */
class NoStartChecksSink extends SinkWrapper {
  override async readWatermark() {
    try {
      return await this.inner.readWatermark();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'OFFSETS_TOPIC_INVALID' || code === 'TRANSACTIONAL_ID_CONFLICT') return null;
      throw error;
    }
  }
  commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void> {
    return this.inner.commit(position, records);
  }
}

/**
 * Two lanes (rule E7) that take turns like the real sink's, but the second
 * one is fenced only when its turn first comes, not at connect(): a Kafka
 * transaction a killed or paused predecessor left open on <id>.2 survives
 * the start, and that predecessor can still commit it.
 */
class LazyLaneSink implements TransactionalSink {
  readonly transactional = true as const;
  private turn = 0;
  private secondConnected = false;
  constructor(
    private readonly first: TransactionalSink,
    private readonly second: TransactionalSink,
  ) {}
  connect() {
    return this.first.connect();
  }
  async disconnect() {
    await this.first.disconnect();
    await this.second.disconnect();
  }
  metadata(topics?: readonly string[]) {
    return this.first.metadata(topics);
  }
  readWatermark() {
    return this.first.readWatermark();
  }
  private async lane(): Promise<TransactionalSink> {
    if (this.turn === 0) return this.first;
    if (!this.secondConnected) {
      await this.second.connect();
      this.secondConnected = true;
    }
    return this.second;
  }
  async send(records: readonly SinkRecord[]) {
    return (await this.lane()).send(records);
  }
  async commit(position: WatermarkPosition, records?: readonly SinkRecord[]) {
    await (await this.lane()).commit(position, records);
    this.turn = 1 - this.turn;
  }
  seal(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<Sealed> {
    return sealByCommitting(this, position, records);
  }
  abort() {
    return (this.turn === 0 ? this.first : this.second).abort();
  }
}

function lazyLanes(config: SinkSettings, logger: Logger): TransactionalSink {
  const id = config.transactionalId ?? `outbox-tail-${config.slot}`;
  return new LazyLaneSink(
    transactionalSink({ ...config, transactionLanes: 1, transactionalId: id }, logger),
    transactionalSink({ ...config, transactionLanes: 1, transactionalId: `${id}.2` }, logger),
  );
}

/**
 * After a failed session (a timed-out produce, an EndTxn in doubt) it aborts
 * the open Kafka transaction and goes on with the SAME producers: no new
 * InitProducerId, so the next Kafka transaction runs in the same producer
 * epoch and a request of the failed one that arrives late is not fenced (the
 * hazard of the pre-KIP-890 protocol, docs/late-requests.md).
 */
class SameEpochAfterErrorSink extends SinkWrapper {
  private connected = false;
  override async connect() {
    if (this.connected) return;
    await this.inner.connect();
    this.connected = true;
    process.stderr.write('same-epoch: producers initialised once\n');
  }
  override async disconnect() {
    // The correct sink disconnects its producers here, so the next session's connect() re-initialises them (epoch bump).
    await this.inner.abort().catch(() => undefined);
  }
  commit(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<void> {
    return this.inner.commit(position, records);
  }
  override seal(position: WatermarkPosition, records?: readonly SinkRecord[]): Promise<Sealed> {
    return this.inner.seal(position, records);
  }
}

/** The relay makes a sink per session: this variant hands every session the same one (one relay process per variant). */
function sameEpochSink(): SinkFactory {
  let shared: SameEpochAfterErrorSink | null = null;
  return (config, logger) => (shared ??= new SameEpochAfterErrorSink(transactionalSink(config, logger)));
}

/** The skip rule off by one: skips only transactions ending strictly before the watermark, so the last one is published again. */
const skipBelowWatermarkOnly: SkipRule = (commitLsn, watermark) => watermark !== null && watermark.commitLsn !== null && commitLsn < watermark.commitLsn;

/**
 * The skip rule off by one the other way: it also skips the first transaction
 * after the watermark (the first one of a session that is not in Kafka), so
 * the stage acknowledges it unpublished and the next watermark covers it: loss.
 * Stateful (one relay process per variant): the first commit LSN at or above
 * each watermark it is asked about is the one too many.
 */
function skipOneTooMany(): SkipRule {
  let asked: bigint | null = null;
  let extra: bigint | null = null;
  return (commitLsn, watermark) => {
    if (watermark === null) return false;
    if (commitLsn < watermark.lsn) return true;
    if (asked !== watermark.lsn) {
      asked = watermark.lsn;
      extra = commitLsn;
    }
    return commitLsn === extra;
  };
}

export const EXACTLY_ONCE_VARIANTS: Record<string, { sinkFactory?: SinkFactory; skipRule?: SkipRule }> = {
  'watermark-after-commit': { sinkFactory: (config, logger) => new WatermarkAfterCommitSink(transactionalSink(config, logger)) },
  'confirm-before-commit': { sinkFactory: (config, logger) => new ConfirmBeforeCommitSink(transactionalSink(config, logger)) },
  'skip-rule-off-by-one': { skipRule: skipBelowWatermarkOnly },
  'skip-rule-one-too-many': { skipRule: skipOneTooMany() },
  'no-start-checks': { sinkFactory: (config, logger) => new NoStartChecksSink(transactionalSink(config, logger)) },
  'lanes-fenced-lazily': { sinkFactory: lazyLanes },
  // The late-request nemesis (test/faults/late-requests.ts): no epoch bump after an indefinite error.
  'same-epoch-after-error': { sinkFactory: sameEpochSink() },
  // The zombie-fencing test (test/faults/zombie-fencing.ts): the correct relay, with a wide zombie window ...
  'slow-commit': { sinkFactory: (config, logger) => new SlowCommitSink(transactionalSink(config, logger)) },
  // ... and its negative control: no fencing, because every process has a transactional id of its own.
  'slow-commit-unfenced': {
    sinkFactory: (config, logger) =>
      new SlowCommitSink(transactionalSink({ ...config, transactionalId: `${config.transactionalId ?? 'outbox-tail'}-${process.pid}` }, logger)),
  },
};
