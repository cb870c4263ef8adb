import type { Logger } from 'pino';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { SkipRule } from './skip-published.js';
import type { Watermark } from '../../sink/watermark.js';
import type { MalformedRow, OutboxEvent, PipelineItem, Transaction } from '../outbox-event.js';
import type { RecordBuilder } from './record-format/record-builder.js';
import { Lsn } from '../../shared/lsn.js';
import { PgTimestamp } from '../../postgres/pg-timestamp.js';
import type { Sealed, Sink, TransactionalSink, WatermarkPosition } from '../../sink/sink.js';
import type { SinkRecord } from '../../sink/sink-record.js';
import { schemaMismatchError, type ValueEncoder } from './record-format/value-encoder.js';
import { shouldPause, shouldResume, type InFlightLimits } from './backpressure.js';
import type { BadRowPolicies } from './bad-row-policy.js';
import { endsTransaction, keepKafkaTransactionOpen, nextBatchSize, shouldWaitForFullerBatch, transactionalBatchSize, type BatchLimits } from './batching.js';
import { Fifo } from './fifo.js';
import { malformedRowError, malformedRowRecord } from './malformed-policy.js';
import { oversizeDecision, oversizeError } from './oversize-policy.js';

/** Where the stage's input comes from, so it can stop reading when too much is in flight. */
export interface FlowControl {
  pause(): void;
  resume(): void;
  readonly isPaused: boolean;
}

/** Told of every item handed to Kafka and of every acknowledgement (the checkpointer's ack frontier). */
export interface AckTracker {
  dispatched(txn: Transaction): void;
  acknowledged(txn: Transaction, count?: number): void;
}

/** --delivery exactly-once: what the stage needs besides the records' sink. */
export interface ExactlyOnceOptions {
  sink: Pick<TransactionalSink, 'send' | 'commit' | 'seal' | 'abort'>;
  /** alreadyPublished, or a deliberately wrong rule in the crash suite's negative controls. */
  skipRule: SkipRule;
  /** The checkpointer: when nothing is open or in flight, its (keepalive) position may become a watermark of its own. */
  frontier: { readonly safeLsn: Lsn; readonly quiescent: boolean };
}

/** The counters the stage keeps (RelayStats has them). */
export interface PublishCounters {
  eventsReceived: number;
  recordsPublished: number;
  deadLettered: number;
  batches: number;
  /** Exactly-once: Kafka transactions committed with records, and the PostgreSQL transactions they carried. */
  kafkaTransactions: number;
  kafkaTransactionsPgTransactions: number;
  readonly onPublished: ((topic: string, commitTimeMicros: bigint, deadLetter: boolean) => void) | null;
}

export interface PublishingStageOptions {
  sink: Pick<Sink, 'send' | 'maxInFlightRequests'>;
  builder: RecordBuilder;
  limits: BatchLimits & InFlightLimits;
  policies: BadRowPolicies;
  flow: FlowControl;
  acks: AckTracker;
  /** Confirms what Kafka acknowledged so far; awaited before the stage halts on a bad row. */
  confirm(): Promise<unknown>;
  counters: PublishCounters;
  logger: Logger;
  exactlyOnce?: ExactlyOnceOptions | null;
  /** --value-format avro|json-schema: each event's value is encoded through the schema registry before it is sent. */
  valueEncoder?: ValueEncoder | null;
}

/** Records sent in the open Kafka transaction, acknowledged when it commits: no payloads kept, one run per transaction and topic. */
interface UncommittedRun {
  readonly txn: Transaction;
  readonly topic: string;
  readonly deadLetter: boolean;
  count: number;
}

/**
 * Exactly-once on an idle outbox: how often the position a keepalive allowed
 * (LSN rule 5) is written as a watermark of its own, so the slot can be
 * confirmed past other tables' WAL without ever passing the watermark.
 */
const KEEPALIVE_WATERMARK_INTERVAL_MS = 10_000;

interface Entry {
  readonly txn: Transaction;
  /** null = a malformed row under the `fail` policy: the stage halts here. */
  record: SinkRecord | null;
  readonly event: OutboxEvent | null;
  readonly malformed: MalformedRow | null;
  readonly bytes: number;
  /** Sent to the dead-letter topic instead of its own (oversize under dead-letter). */
  deadLettered: boolean;
  /** --value-format: the value is still the payload's JSON, to be encoded before it is sent. */
  unencoded: boolean;
  /** Why the stage halts here when it is not a malformed row (a payload its schema refuses, under `fail`). */
  haltError?: OutboxTailError;
}

const isTooLarge = (error: unknown) => OutboxTailError.is(error) && error.code === 'MESSAGE_TOO_LARGE';

/**
 * The pipeline's publishing stage: a queue between the assembler and the
 * sink. Items are queued as they are decoded; the stage sends them in
 * batches, up to the sink's maxInFlightRequests at a time (order kept by the
 * sink), applies --on-malformed and
 * --on-oversize, pauses its input while too much is unacknowledged, and
 * tells the ack tracker about every record Kafka acknowledged.
 */
export class PublishingStage {
  private readonly queue = new Fifo<Entry>();
  private queuedBytes = 0;
  private draining = false;
  private aborted = false;
  private wake: (() => void) | null = null;
  // Exactly-once state: the watermark read at start (what to skip), the last committed one (what may be confirmed),
  // and what the open Kafka transaction holds.
  private startWatermark: Watermark | null = null;
  private published = Lsn.of(0n);
  private lastCommitAt = Date.now();
  private uncommitted: UncommittedRun[] = [];
  /** The size of the last batch sent in exactly-once mode: a large one means a backlog (keepKafkaTransactionOpen). */
  private lastBatch = { messages: 0, bytes: 0 };
  private uncommittedCount = 0;
  private lastSent: Transaction | null = null;
  /**
   * The sealed Kafka transaction whose EndTxn is pending (its records not yet
   * acknowledged): resolves once they are, rejects if EndTxn failed. At most
   * one: the next seal waits for it.
   */
  private sealed: Promise<void> | null = null;
  /** The sealed Kafka transaction's EndTxn has not settled yet (known without awaiting it). */
  private sealedPending = false;
  private commitFailure: unknown = null;
  /** When the open Kafka transaction got its first records. */
  private openedAt = 0;
  private skipped = 0;
  /** At least once: batches sent and not yet acknowledged, oldest first; they are the first `sentAhead` queue entries. */
  private pipeline: { readonly count: number; readonly acked: Promise<void> }[] = [];
  private sentAhead = 0;

  private readonly encoder: ValueEncoder | null;

  constructor(private readonly options: PublishingStageOptions) {
    this.encoder = options.valueEncoder ?? null;
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

  /** A transaction's Commit was decoded: the open Kafka transaction may now be committable. */
  committed(_txn: Transaction): void {
    this.wake?.();
  }

  /** One item of the assembler, in stream order. Synchronous: called from the replication socket's data handler. */
  enqueue(item: PipelineItem): void {
    const { builder, policies, counters, acks, flow, limits } = this.options;
    let entry: Entry;
    if (item.kind === 'event') {
      const record = builder.build(item.event);
      entry = { txn: item.event.txn, record, event: item.event, malformed: null, bytes: record.bytes, deadLettered: false, unencoded: this.encoder !== null };
      counters.eventsReceived++;
    } else {
      const row = item.row;
      this.options.logger.warn({ event: 'malformed-row', outboxId: row.id, reason: row.reason, policy: policies.malformed.action }, 'malformed outbox row');
      const record = malformedRowRecord(row, policies.malformed, builder);
      entry = { txn: row.txn, record, event: null, malformed: row, bytes: record?.bytes ?? 0, deadLettered: false, unencoded: false };
    }
    acks.dispatched(entry.txn);
    this.queue.push(entry);
    this.queuedBytes += entry.bytes;
    if (shouldPause(this.inFlight(), limits)) flow.pause();
    this.wake?.();
  }

  /**
   * Publishes until drain() was asked and the queue is empty; rejects on a sink failure or a bad row it halts on.
   * Up to the sink's maxInFlightRequests batches are sent before the oldest is acknowledged
   * (docs/architecture.md#pipelined-produce-chain); entries leave the queue, and reach the ack tracker, only when
   * their batch and every earlier one were acknowledged, in queue order.
   */
  async run(): Promise<void> {
    if (this.options.exactlyOnce) return this.runTransactional(this.options.exactlyOnce);
    const { limits, sink, logger } = this.options;
    const depth = Math.max(1, sink.maxInFlightRequests ?? 1);
    while (!this.aborted) {
      const unsent = this.queue.length - this.sentAhead;
      if (this.pipeline.length > 0 && (this.pipeline.length >= depth || unsent === 0 || this.queue.peek(this.sentAhead)!.record === null)) {
        await this.settleOldest();
        continue;
      }
      if (unsent === 0) {
        if (this.draining) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      if (this.pipeline.length === 0 && shouldWaitForFullerBatch(unsent, this.draining, limits)) {
        await new Promise((resolve) => setTimeout(resolve, limits.batchMaxWaitMs));
      }
      if (this.encoder) {
        await this.encodeAhead(this.encoder, this.sentAhead);
        // A value the schema refused halts: the batches in flight ahead of it settle first (the check at the top).
        if (this.pipeline.length > 0 && this.queue.peek(this.sentAhead)!.record === null) continue;
      }
      const head = this.queue.peek(this.sentAhead)!;
      if (head.record === null) await this.halt(head.haltError ?? malformedRowError(head.malformed!));
      const offset = this.sentAhead;
      const count = nextBatchSize({ length: this.queue.length - offset, peek: (i) => this.queue.peek(offset + i) }, limits);
      const records: SinkRecord[] = new Array(count);
      for (let i = 0; i < count; i++) records[i] = this.queue.peek(offset + i)!.record!;
      logger.debug({ event: 'batch', records: count, inFlight: this.pipeline.length }, 'publishing batch');
      const acked = sink.send(records);
      // Awaited by settleOldest() in order; a rejection behind an earlier one is never unhandled.
      acked.catch(() => undefined);
      this.pipeline.push({ count, acked });
      this.sentAhead += count;
    }
  }

  /**
   * Waits for the oldest batch in flight and acknowledges it. A batch Kafka
   * refuses as too large: the batches behind it are waited for and sent again
   * (the sink writes none of a partition's records behind a refused request),
   * and its records go one by one under --on-oversize.
   */
  private async settleOldest(): Promise<void> {
    const oldest = this.pipeline[0]!;
    try {
      await oldest.acked;
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      await Promise.allSettled(this.pipeline.map((batch) => batch.acked));
      this.pipeline = [];
      this.sentAhead = 0;
      await this.publishOneByOne(oldest.count);
      return;
    }
    this.pipeline.shift();
    this.sentAhead -= oldest.count;
    this.acknowledge(oldest.count);
    this.options.counters.batches++;
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
  private async runTransactional(eo: ExactlyOnceOptions): Promise<void> {
    const { limits, logger, counters } = this.options;
    while (!this.aborted) {
      if (this.commitFailure) throw this.commitFailure;
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
          sealed = await eo.sink.seal(this.watermarkOf(last, this.uncommittedCount + count), records);
        } else await eo.sink.send(records);
      } catch (error) {
        if (!isTooLarge(error)) throw error;
        throw new OutboxTailError('MESSAGE_TOO_LARGE', (error as Error).message, {
          hint: "exactly-once delivery cannot dead-letter a record inside a Kafka transaction: raise the broker's or topic's max.message.bytes, or publish that row with --delivery at-least-once",
          cause: error,
        });
      }
      this.moveToUncommitted(count);
      this.lastBatch = { messages: count, bytes };
      counters.batches++;
      if (sealed) this.untilCommitted(last, sealed);
    }
  }

  /** Queue head entries of transactions an earlier relay already published: acknowledged at once, never sent. */
  private skipPublished(eo: ExactlyOnceOptions): void {
    const { acks, flow, limits, logger } = this.options;
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
    if (flow.isPaused && !this.draining && shouldResume(this.inFlight(), limits)) flow.resume();
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
    this.untilCommitted(last, await eo.sink.seal(this.watermarkOf(last, this.uncommittedCount)));
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
    this.sealedPending = true;
    const settled = sealed.committed.then(
      () => {
        this.sealedPending = false;
        this.afterCommit(last, runs);
      },
      (error: unknown) => {
        this.sealedPending = false;
        this.commitFailure ??= error;
        this.wake?.();
        throw error;
      },
    );
    // Awaited by settle() or reported through commitFailure: never an unhandled rejection.
    settled.catch(() => undefined);
    this.sealed = settled;
  }

  /**
   * While the previous Kafka transaction's EndTxn is pending, the open one keeps
   * taking the queued records instead of waiting to be sealed: it could not be
   * sealed before that EndTxn succeeded anyway (one transaction in doubt at
   * most), and sending meanwhile is what keeps a catch-up going while the
   * coordinator writes its transaction log (EndTxn took 2-200 ms in the bench).
   */
  private sendWhileSealing(queued: number): boolean {
    return this.sealedPending && queued > 0;
  }

  /** Waits until the sealed Kafka transaction, if any, committed and its records are acknowledged; rejects if it failed. */
  private async settle(): Promise<void> {
    const sealed = this.sealed;
    if (!sealed) return;
    await sealed;
    if (this.sealed === sealed) this.sealed = null;
  }

  /** The watermark of a Kafka transaction whose last PostgreSQL transaction is `last` (complete) and that holds `count` records. */
  private watermarkOf(last: Transaction, count: number): WatermarkPosition {
    return { lsn: last.endLsn!, commitLsn: last.commitLsn, commitTime: new Date(PgTimestamp.toUnixMs(last.commitTime)).toISOString(), count };
  }

  /** The Kafka transaction ending with `last` committed: acknowledge its records (the checkpointer may confirm them now). */
  private afterCommit(last: Transaction, runs: readonly UncommittedRun[]): void {
    this.published = Lsn.max(this.published, last.endLsn!);
    this.lastCommitAt = Date.now();
    const { counters, acks } = this.options;
    counters.kafkaTransactions++;
    let previous: Transaction | null = null;
    for (const run of runs) {
      if (run.txn !== previous) counters.kafkaTransactionsPgTransactions++;
      previous = run.txn;
      for (let i = 0; i < run.count; i++) counters.onPublished?.(run.topic, run.txn.commitTime, run.deadLetter);
      if (run.deadLetter) counters.deadLettered += run.count;
      else counters.recordsPublished += run.count;
      acks.acknowledged(run.txn, run.count);
    }
  }

  /** Waits for work; on an idle outbox, turns a keepalive position into a watermark now and then. */
  private async idle(eo: ExactlyOnceOptions): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, KEEPALIVE_WATERMARK_INTERVAL_MS);
    });
    clearTimeout(timer);
    this.wake = null;
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
    const { flow, limits } = this.options;
    if (this.uncommittedCount === 0) this.openedAt = Date.now();
    for (let i = 0; i < count; i++) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      const topic = entry.record!.topic;
      const deadLetter = entry.event === null || entry.deadLettered;
      const run = this.uncommitted[this.uncommitted.length - 1];
      if (run && run.txn === entry.txn && run.topic === topic && run.deadLetter === deadLetter) run.count++;
      else this.uncommitted.push({ txn: entry.txn, topic, deadLetter, count: 1 });
      this.uncommittedCount++;
      this.lastSent = entry.txn;
    }
    if (flow.isPaused && !this.draining && shouldResume(this.inFlight(), limits)) flow.resume();
  }

  /**
   * --value-format: encodes the values of the next batch's worth of queued
   * events, in order, before any of them is sent. A payload its schema refuses
   * goes through --on-malformed: a dead-letter pointer, or (fail) the stage
   * halts on it after publishing and confirming what came before. A registry
   * that cannot be reached rejects here: nothing of this batch was sent, and
   * the session restarts from the slot.
   */
  private async encodeAhead(encoder: ValueEncoder, from = 0): Promise<void> {
    const { limits, policies, builder, logger } = this.options;
    // The bound is read again after every await: events enqueued meanwhile may join the batch, so they are encoded too.
    for (let i = from; i < Math.min(this.queue.length, from + limits.batchMaxMessages); i++) {
      const entry = this.queue.peek(i)!;
      if (!entry.unencoded) continue;
      const record = entry.record!;
      const event = entry.event!;
      const result = encoder.tryEncode(record, event) ?? (await encoder.encode(record, event));
      entry.unencoded = false;
      if (result.ok) {
        record.value = result.value;
        continue;
      }
      logger.warn(
        { event: 'schema-mismatch', outboxId: event.id, subject: result.subject, schemaId: result.schemaId, policy: policies.malformed.action },
        'payload does not fit its schema',
      );
      if (policies.malformed.action === 'dead-letter') {
        entry.record = builder.deadLetter(event, `schema: ${result.reason}`, record.topic, policies.malformed.topic);
        entry.deadLettered = true;
      } else {
        entry.record = null;
        entry.haltError = schemaMismatchError(event, result);
        return;
      }
    }
  }

  /** Stop reading, publish what is queued, then let run() resolve. */
  drain(): void {
    this.draining = true;
    this.wake?.();
  }

  /** The session failed elsewhere: publish nothing more. */
  abort(): void {
    this.aborted = true;
    this.wake?.();
  }

  private inFlight() {
    return { messages: this.queue.length, bytes: this.queuedBytes };
  }

  /** Kafka refused a batch as too large: find the record(s) it refuses alone and apply --on-oversize. */
  private async publishOneByOne(count: number): Promise<void> {
    const { sink, builder, policies, logger } = this.options;
    for (let i = 0; i < count; i++) {
      const entry = this.queue.peek()!;
      const record = entry.record!;
      try {
        await sink.send([record]);
      } catch (error) {
        if (!isTooLarge(error)) throw error;
        const id = entry.event?.id ?? entry.malformed?.id ?? null;
        logger.warn(
          { event: 'oversize', outboxId: id, bytes: entry.bytes, topic: record.topic, policy: policies.oversize.action },
          'record too large for Kafka',
        );
        const decision = oversizeDecision(policies.oversize, entry.event !== null);
        if (decision.action === 'halt') return this.halt(oversizeError({ id, bytes: entry.bytes, topic: record.topic, txn: entry.txn }, error));
        const pointer = builder.deadLetter(entry.event!, `oversize: ${entry.bytes} bytes`, record.topic, decision.topic);
        await sink.send([pointer]);
        entry.record = pointer;
        entry.deadLettered = true;
      }
      this.acknowledge(1);
    }
  }

  private acknowledge(count: number): void {
    const { counters, acks, flow, limits } = this.options;
    for (let i = 0; i < count; i++) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      const deadLetter = entry.event === null || entry.deadLettered;
      if (deadLetter) counters.deadLettered++;
      else counters.recordsPublished++;
      counters.onPublished?.(entry.record!.topic, entry.txn.commitTime, deadLetter);
      acks.acknowledged(entry.txn);
    }
    if (flow.isPaused && !this.draining && shouldResume(this.inFlight(), limits)) flow.resume();
  }

  /** Confirm everything before the bad row, then stop for good. */
  private async halt(error: OutboxTailError): Promise<never> {
    await this.settle();
    await this.options.confirm();
    throw error;
  }
}
