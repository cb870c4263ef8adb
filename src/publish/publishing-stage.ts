import type { Logger } from 'pino';
import { OutboxTailError } from '../errors/outbox-tail-error.js';
import type { MalformedRow, OutboxEvent, PipelineItem, Transaction } from '../outbox/outbox-event.js';
import type { RecordBuilder } from '../sink/record-builder.js';
import type { Sink, SinkRecord } from '../sink/sink.js';
import { shouldPause, shouldResume, type InFlightLimits } from './backpressure.js';
import type { BadRowPolicies } from './bad-row-policy.js';
import { nextBatchSize, shouldWaitForFullerBatch, type BatchLimits } from './batching.js';
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
  acknowledged(txn: Transaction): void;
}

/** The counters the stage keeps (RelayStats has them). */
export interface PublishCounters {
  eventsReceived: number;
  recordsPublished: number;
  deadLettered: number;
  batches: number;
  readonly onPublished: ((topic: string, commitTimeMicros: bigint, deadLetter: boolean) => void) | null;
}

export interface PublishingStageOptions {
  sink: Pick<Sink, 'send'>;
  builder: RecordBuilder;
  limits: BatchLimits & InFlightLimits;
  policies: BadRowPolicies;
  flow: FlowControl;
  acks: AckTracker;
  /** Confirms what Kafka acknowledged so far; awaited before the stage halts on a bad row. */
  confirm(): Promise<unknown>;
  counters: PublishCounters;
  logger: Logger;
}

interface Entry {
  readonly txn: Transaction;
  /** null = a malformed row under the `fail` policy: the stage halts here. */
  record: SinkRecord | null;
  readonly event: OutboxEvent | null;
  readonly malformed: MalformedRow | null;
  readonly bytes: number;
  /** Sent to the dead-letter topic instead of its own (oversize under dead-letter). */
  deadLettered: boolean;
}

const isTooLarge = (error: unknown) => OutboxTailError.is(error) && error.code === 'MESSAGE_TOO_LARGE';

/**
 * The pipeline's publishing stage: a queue between the assembler and the
 * sink. Items are queued as they are decoded; the stage sends them in
 * batches, one request at a time (order), applies --on-malformed and
 * --on-oversize, pauses its input while too much is unacknowledged, and
 * tells the ack tracker about every record Kafka acknowledged.
 */
export class PublishingStage {
  private readonly queue = new Fifo<Entry>();
  private queuedBytes = 0;
  private draining = false;
  private aborted = false;
  private wake: (() => void) | null = null;

  constructor(private readonly options: PublishingStageOptions) {}

  /** One item of the assembler, in stream order. Synchronous: called from the replication socket's data handler. */
  enqueue(item: PipelineItem): void {
    const { builder, policies, counters, acks, flow, limits } = this.options;
    let entry: Entry;
    if (item.kind === 'event') {
      const record = builder.build(item.event);
      entry = { txn: item.event.txn, record, event: item.event, malformed: null, bytes: record.bytes, deadLettered: false };
      counters.eventsReceived++;
    } else {
      const row = item.row;
      this.options.logger.warn({ event: 'malformed-row', outboxId: row.id, reason: row.reason, policy: policies.malformed.action }, 'malformed outbox row');
      const record = malformedRowRecord(row, policies.malformed, builder);
      entry = { txn: row.txn, record, event: null, malformed: row, bytes: record?.bytes ?? 0, deadLettered: false };
    }
    acks.dispatched(entry.txn);
    this.queue.push(entry);
    this.queuedBytes += entry.bytes;
    if (shouldPause(this.inFlight(), limits)) flow.pause();
    this.wake?.();
  }

  /** Publishes until drain() was asked and the queue is empty; rejects on a sink failure or a bad row it halts on. */
  async run(): Promise<void> {
    const { limits, sink, logger, counters } = this.options;
    while (!this.aborted) {
      if (this.queue.length === 0) {
        if (this.draining) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      if (shouldWaitForFullerBatch(this.queue.length, this.draining, limits)) {
        await new Promise((resolve) => setTimeout(resolve, limits.batchMaxWaitMs));
      }
      const head = this.queue.peek()!;
      if (head.record === null) await this.halt(malformedRowError(head.malformed!));
      const count = nextBatchSize(this.queue, limits);
      const records: SinkRecord[] = new Array(count);
      for (let i = 0; i < count; i++) records[i] = this.queue.peek(i)!.record!;
      logger.debug({ event: 'batch', records: count }, 'publishing batch');
      try {
        await sink.send(records);
      } catch (error) {
        if (!isTooLarge(error)) throw error;
        await this.publishOneByOne(count);
        continue;
      }
      this.acknowledge(count);
      counters.batches++;
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
    await this.options.confirm();
    throw error;
  }
}
