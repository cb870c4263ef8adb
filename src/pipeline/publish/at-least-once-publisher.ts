import type { SinkRecord } from '../../sink/sink-record.js';
import { nextBatchSize, shouldWaitForFullerBatch } from './batching.js';
import { malformedRowError } from './malformed-policy.js';
import { oversizeDecision, oversizeError } from './oversize-policy.js';
import { isTooLarge, PublishQueue } from './publish-queue.js';

/**
 * --delivery at-least-once: the queue is sent in batches, up to the sink's
 * maxInFlightRequests at a time (order kept by the sink), --on-oversize
 * applies to a record Kafka refuses as too large, and every record Kafka
 * acknowledged is told to the ack tracker, in queue order.
 */
export class AtLeastOncePublisher extends PublishQueue {
  /** Batches sent and not yet acknowledged, oldest first; they are the first `sentAhead` queue entries. */
  private pipeline: { readonly count: number; readonly acked: Promise<void> }[] = [];
  private sentAhead = 0;

  /**
   * Up to the sink's maxInFlightRequests batches are sent before the oldest is acknowledged
   * (docs/architecture.md#pipelined-produce-chain); entries leave the queue, and reach the ack tracker, only when
   * their batch and every earlier one were acknowledged, in queue order.
   */
  async run(): Promise<void> {
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
        await this.waitForWork();
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
    const { counters, acks } = this.options;
    for (let i = 0; i < count; i++) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      const deadLetter = entry.event === null || entry.deadLettered;
      if (deadLetter) counters.deadLettered++;
      else counters.recordsPublished++;
      counters.onPublished?.(entry.record!.topic, entry.txn.commitTime, deadLetter);
      acks.acknowledged(entry.txn);
    }
    this.resumeIfRoom();
  }
}
