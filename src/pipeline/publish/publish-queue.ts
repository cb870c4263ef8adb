import type { Logger } from 'pino';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { MalformedRow, OutboxEvent, PipelineItem, Transaction } from '../outbox-event.js';
import type { RecordBuilder } from './record-format/record-builder.js';
import type { Sink } from '../../sink/sink.js';
import type { SinkRecord } from '../../sink/sink-record.js';
import { schemaMismatchError, type ValueEncoder } from './record-format/value-encoder.js';
import { shouldPause, shouldResume, type InFlightLimits } from './backpressure.js';
import type { BadRowPolicies } from './bad-row-policy.js';
import type { BatchLimits } from './batching.js';
import { Fifo } from './fifo.js';
import { malformedRowRecord } from './malformed-policy.js';

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

/** What the publishing stage is built from; exactly-once adds ExactlyOnceOptions. */
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
  /** --value-format avro|json-schema: each event's value is encoded through the schema registry before it is sent. */
  valueEncoder?: ValueEncoder | null;
}

export interface Entry {
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

export const isTooLarge = (error: unknown) => OutboxTailError.is(error) && error.code === 'MESSAGE_TOO_LARGE';

/**
 * The publishing stage's queue between the assembler and the sink, the part
 * both delivery modes share: items are queued as they are decoded (and built
 * into records), the input is paused while too much is unacknowledged, values
 * are encoded through the schema registry ahead of sending (--value-format),
 * and a bad row under `fail` halts the stage after what came before it was
 * confirmed. How the queue is sent and acknowledged is the delivery mode's:
 * AtLeastOncePublisher (batches, up to the sink's maxInFlightRequests at a
 * time) or ExactlyOncePublisher (Kafka transactions with a watermark).
 */
export abstract class PublishQueue {
  protected readonly queue = new Fifo<Entry>();
  protected queuedBytes = 0;
  protected draining = false;
  protected aborted = false;
  protected wake: (() => void) | null = null;
  protected readonly encoder: ValueEncoder | null;

  constructor(protected readonly options: PublishingStageOptions) {
    this.encoder = options.valueEncoder ?? null;
  }

  /** Publishes until drain() was asked and the queue is empty; rejects on a sink failure or a bad row it halts on. */
  abstract run(): Promise<void>;

  /** A transaction's Commit was decoded: the open Kafka transaction may now be committable. */
  committed(_txn: Transaction): void {
    this.wake?.();
  }

  /** One item of the assembler, in stream order. Synchronous: called from the replication socket's data handler. */
  enqueue(item: PipelineItem): void {
    const { builder, counters, acks, flow, limits } = this.options;
    let entry: Entry;
    if (item.kind === 'event') {
      const record = builder.build(item.event);
      const misrouted = builder.misrouted(record);
      if (misrouted === null) {
        entry = { txn: item.event.txn, record, event: item.event, malformed: null, bytes: record.bytes, deadLettered: false, unencoded: this.encoder !== null };
        counters.eventsReceived++;
      } else {
        entry = this.malformedEntry({ id: item.event.id, reason: misrouted, table: item.event.table, txn: item.event.txn });
      }
    } else {
      entry = this.malformedEntry(item.row);
    }
    acks.dispatched(entry.txn);
    this.queue.push(entry);
    this.queuedBytes += entry.bytes;
    if (shouldPause(this.inFlight(), limits)) flow.pause();
    this.wake?.();
  }

  /** A row that cannot be published as it is: a dead-letter pointer, or (fail) the entry the stage halts on. */
  private malformedEntry(row: MalformedRow): Entry {
    const { builder, policies } = this.options;
    this.options.logger.warn({ event: 'malformed-row', outboxId: row.id, reason: row.reason, policy: policies.malformed.action }, 'malformed outbox row');
    const record = malformedRowRecord(row, policies.malformed, builder);
    return { txn: row.txn, record, event: null, malformed: row, bytes: record?.bytes ?? 0, deadLettered: false, unencoded: false };
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

  protected inFlight() {
    return { messages: this.queue.length, bytes: this.queuedBytes };
  }

  /** The input may flow again once what is in flight fell below the limits. */
  protected resumeIfRoom(): void {
    const { flow, limits } = this.options;
    if (flow.isPaused && !this.draining && shouldResume(this.inFlight(), limits)) flow.resume();
  }

  /** Waits until enqueue(), drain() or abort() wakes the stage. */
  protected async waitForWork(timeoutMs?: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      if (timeoutMs !== undefined) timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
    this.wake = null;
  }

  /**
   * --value-format: encodes the values of the next batch's worth of queued
   * events, in order, before any of them is sent. A payload its schema refuses
   * goes through --on-malformed: a dead-letter pointer, or (fail) the stage
   * halts on it after publishing and confirming what came before. A registry
   * that cannot be reached rejects here: nothing of this batch was sent, and
   * the session restarts from the slot.
   */
  protected async encodeAhead(encoder: ValueEncoder, from = 0): Promise<void> {
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

  /** Confirm everything before the bad row, then stop for good. */
  protected async halt(error: OutboxTailError): Promise<never> {
    await this.beforeHalt();
    await this.options.confirm();
    throw error;
  }

  /** What must settle before the stage confirms and halts (exactly-once: the sealed Kafka transaction). */
  protected async beforeHalt(): Promise<void> {}
}
