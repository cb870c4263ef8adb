import { Lsn } from '../../shared/lsn.js';
import { PgTimestamp } from '../../postgres/pg-timestamp.js';
import type { Sealed, TransactionalSink, WatermarkPosition } from '../../sink/sink.js';
import type { SkipRule } from './skip-published.js';
import type { SinkRecord } from '../../sink/sink-record.js';
import type { Watermark } from '../../sink/watermark.js';
import type { Transaction } from '../outbox-event.js';
import { endsTransaction, keepKafkaTransactionOpen, shouldWaitForFullerBatch, transactionalBatchSize } from './batching.js';
import { malformedRowError } from './malformed-policy.js';
import { oversizeInTransactionError } from './oversize-policy.js';
import { isTooLarge, PublishQueue, type PublishingStageOptions } from './publish-queue.js';
import { SealedCommit } from './sealed-commit.js';
import { acknowledgeRuns, addToRuns, type UncommittedRun } from './uncommitted-runs.js';

/**
 * Exactly-once on an idle outbox: how often the position a keepalive allowed
 * (LSN rule 5) is written as a watermark of its own, so the slot can be
 * confirmed past other tables' WAL without ever passing the watermark.
 */
const KEEPALIVE_WATERMARK_INTERVAL_MS = 10_000;

/** --delivery exactly-once: what the stage needs besides the records' sink. */
export interface ExactlyOnceOptions {
  sink: Pick<TransactionalSink, 'send' | 'commit' | 'seal' | 'abort'>;
  /** alreadyPublished, or a deliberately wrong rule in the crash suite's negative controls. */
  skipRule: SkipRule;
  /** The checkpointer: when nothing is open or in flight, its (keepalive) position may become a watermark of its own. */
  frontier: { readonly safeLsn: Lsn; readonly quiescent: boolean };
}

/** The watermark of a Kafka transaction whose last PostgreSQL transaction is `last` (complete) and that holds `count` records. */
function watermarkOf(last: Transaction, count: number): WatermarkPosition {
  return { lsn: last.endLsn!, commitLsn: last.commitLsn, commitTime: new Date(PgTimestamp.toUnixMs(last.commitTime)).toISOString(), count };
}

/**
 * --delivery exactly-once (docs/architecture.md#exactly-once): batches are cut
 * at PostgreSQL transaction boundaries and sent into one open Kafka
 * transaction; when the last transaction sent is complete, the watermark is
 * appended and the Kafka transaction is sealed (EndTxn sent), and only when it
 * committed are its records acknowledged to the checkpointer.
 */
export class ExactlyOncePublisher extends PublishQueue {
  // The watermark read at start (what to skip), the last committed one (what may be confirmed), and what the open
  // Kafka transaction holds.
  private startWatermark: Watermark | null = null;
  private published = Lsn.of(0n);
  private lastCommitAt = Date.now();
  private uncommitted: UncommittedRun[] = [];
  /** The size of the last batch sent: a large one means a backlog (keepKafkaTransactionOpen). */
  private lastBatch = { messages: 0, bytes: 0 };
  private uncommittedCount = 0;
  private lastSent: Transaction | null = null;
  /** The sealed Kafka transaction whose EndTxn is pending, if any. */
  private readonly sealedCommit = new SealedCommit(() => this.wake?.());
  /** When the open Kafka transaction got its first records. */
  private openedAt = 0;
  private skipped = 0;

  constructor(
    options: PublishingStageOptions,
    private readonly eo: ExactlyOnceOptions,
  ) {
    super(options);
  }

  /** Exactly-once: the slot's watermark read from Kafka before run(); transactions at or below it are skipped. */
  startFrom(watermark: Watermark | null): void {
    this.startWatermark = watermark;
    if (watermark) this.published = Lsn.max(this.published, watermark.lsn);
  }

  /** Exactly-once: the last watermark in a committed Kafka transaction; the status sender never confirms past it. */
  get publishedLsn(): Lsn {
    return this.published;
  }

  /**
   * Exactly-once (docs/architecture.md#exactly-once): batches are cut at
   * PostgreSQL transaction boundaries and sent into one open Kafka
   * transaction; when the last transaction sent is complete, the watermark is
   * appended and the Kafka transaction is sealed (EndTxn sent), and only when
   * it committed are its records acknowledged to the checkpointer. The next
   * Kafka transaction takes batches meanwhile but is sealed only after that
   * (settle()). A transaction larger than a batch spans
   * several batches of the same Kafka transaction; in a backlog, one Kafka
   * transaction also takes several batches of whole transactions.
   */
  async run(): Promise<void> {
    const eo = this.eo;
    const { limits, logger, counters } = this.options;
    while (!this.aborted) {
      if (this.sealedCommit.failure) throw this.sealedCommit.failure;
      this.skipPublished(eo);
      if (await this.commitIfComplete(eo)) continue;
      if (this.queue.length === 0) {
        if (this.draining) {
          await this.settle();
          // The rest of an incomplete transaction will not come in this session: nothing of it may become visible.
          if (this.lastSent) await eo.sink.abort();
          return;
        }
        await this.idle(eo);
        continue;
      }
      if (shouldWaitForFullerBatch(this.queue.length, this.draining, limits)) {
        await new Promise((resolve) => setTimeout(resolve, limits.batchMaxWaitMs));
      }
      if (this.encoder) await this.encodeAhead(this.encoder);
      const head = this.queue.peek()!;
      if (head.record === null) {
        // Everything before the bad row is committed (and confirmed) before the relay halts on it.
        await this.commitIfComplete(eo, true);
        await this.halt(head.haltError ?? malformedRowError(head.malformed!));
      }
      const count = transactionalBatchSize(this.queue, limits);
      const records: SinkRecord[] = new Array(count);
      let bytes = 0;
      for (let i = 0; i < count; i++) {
        const entry = this.queue.peek(i)!;
        records[i] = entry.record!;
        bytes += entry.bytes;
      }
      // Will the Kafka transaction commit right after this batch (commitIfComplete's rule, decided before sending)? Then
      // the batch goes with the watermark.
      const last = this.queue.peek(count - 1)!.txn;
      const remaining = { messages: this.queue.length - count, bytes: this.queuedBytes - bytes };
      const age = this.uncommittedCount === 0 ? 0 : Date.now() - this.openedAt;
      const commitWith =
        endsTransaction(last, this.queue.peek(count)) &&
        (this.draining || (!keepKafkaTransactionOpen(remaining, age, limits, { messages: count, bytes }) && !this.sendWhileSealing(remaining.messages)));
      logger.debug({ event: 'batch', records: count, commit: commitWith }, 'publishing batch in a Kafka transaction');
      let sealed: Sealed | null = null;
      try {
        if (commitWith) {
          await this.settle();
          sealed = await eo.sink.seal(watermarkOf(last, this.uncommittedCount + count), records);
        } else await eo.sink.send(records);
      } catch (error) {
        throw isTooLarge(error) ? oversizeInTransactionError(error) : error;
      }
      this.moveToUncommitted(count);
      this.lastBatch = { messages: count, bytes };
      counters.batches++;
      if (sealed) this.untilCommitted(last, sealed);
    }
  }

  /** Queue head entries of transactions an earlier relay already published: acknowledged at once, never sent. */
  private skipPublished(eo: ExactlyOnceOptions): void {
    const { acks, logger } = this.options;
    let skippedNow = 0;
    for (let head = this.queue.peek(); head && eo.skipRule(head.txn.commitLsn, this.startWatermark); head = this.queue.peek()) {
      this.queue.shift();
      this.queuedBytes -= head.bytes;
      acks.acknowledged(head.txn);
      skippedNow++;
    }
    if (skippedNow === 0) return;
    this.skipped += skippedNow;
    logger.info(
      { event: 'skipped-published', records: this.skipped, watermark: this.startWatermark && Lsn.format(this.startWatermark.lsn) },
      'skipping records already published in a committed Kafka transaction',
    );
    this.resumeIfRoom();
  }

  /**
   * Commits the open Kafka transaction with its watermark once the last
   * PostgreSQL transaction in it is complete, unless a full batch is queued and
   * the Kafka transaction is young (keepKafkaTransactionOpen); `now` commits
   * regardless (before halting on a bad row).
   */
  private async commitIfComplete(eo: ExactlyOnceOptions, now = false): Promise<boolean> {
    const last = this.lastSent;
    if (!last || !endsTransaction(last, this.queue.peek())) return false;
    // A backlog: the same Kafka transaction takes the next batch too (commits once per several batches).
    if (!now && !this.draining && keepKafkaTransactionOpen(this.inFlight(), Date.now() - this.openedAt, this.options.limits, this.lastBatch)) return false;
    if (!now && !this.draining && this.sendWhileSealing(this.queue.length)) return false;
    await this.settle();
    this.untilCommitted(last, await eo.sink.seal(watermarkOf(last, this.uncommittedCount)));
    return true;
  }

  /**
   * The open Kafka transaction, ending with `last`, is sealed: the next one may
   * take records now, while its records wait for EndTxn to be acknowledged
   * (and the session fails if EndTxn does).
   */
  private untilCommitted(last: Transaction, sealed: Sealed): void {
    const runs = this.uncommitted;
    this.uncommitted = [];
    this.uncommittedCount = 0;
    this.lastSent = null;
    this.sealedCommit.track(sealed, () => this.afterCommit(last, runs));
  }

  /**
   * While the previous Kafka transaction's EndTxn is pending, the open one keeps
   * taking the queued records instead of waiting to be sealed: it could not be
   * sealed before that EndTxn succeeded anyway (one transaction in doubt at
   * most), and sending meanwhile is what keeps a catch-up going while the
   * coordinator writes its transaction log (EndTxn took 2-200 ms in the bench).
   */
  private sendWhileSealing(queued: number): boolean {
    return this.sealedCommit.pending && queued > 0;
  }

  private settle(): Promise<void> {
    return this.sealedCommit.settle();
  }

  /** The Kafka transaction ending with `last` committed: acknowledge its records (the checkpointer may confirm them now). */
  private afterCommit(last: Transaction, runs: readonly UncommittedRun[]): void {
    this.published = Lsn.max(this.published, last.endLsn!);
    this.lastCommitAt = Date.now();
    acknowledgeRuns(runs, this.options.counters, this.options.acks);
  }

  /** Waits for work; on an idle outbox, turns a keepalive position into a watermark now and then. */
  private async idle(eo: ExactlyOnceOptions): Promise<void> {
    await this.waitForWork(KEEPALIVE_WATERMARK_INTERVAL_MS);
    const position = eo.frontier.safeLsn;
    const quiet = this.queue.length === 0 && this.lastSent === null && eo.frontier.quiescent;
    if (!this.aborted && !this.draining && quiet && position > this.published && Date.now() - this.lastCommitAt >= KEEPALIVE_WATERMARK_INTERVAL_MS) {
      await this.settle();
      await eo.sink.commit({ lsn: position, commitLsn: null, commitTime: null, count: 0 });
      this.published = Lsn.max(this.published, position);
      this.lastCommitAt = Date.now();
    }
  }

  private moveToUncommitted(count: number): void {
    if (this.uncommittedCount === 0) this.openedAt = Date.now();
    for (let i = 0; i < count; i++) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      addToRuns(this.uncommitted, entry.txn, entry.record!.topic, entry.event === null || entry.deadLettered);
      this.uncommittedCount++;
      this.lastSent = entry.txn;
    }
    this.resumeIfRoom();
  }

  /** A bad row halts only once the sealed Kafka transaction committed (what came before it is confirmed). */
  protected override async beforeHalt(): Promise<void> {
    await this.settle();
  }
}
