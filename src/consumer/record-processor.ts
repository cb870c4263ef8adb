import type { Logger } from 'pino';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import type { ClaimTransaction } from './claim-transaction.js';
import type { ConsumedEvent, DecodeResult } from './consumed-event.js';
import { errorMessage } from './consumer-errors.js';
import type { ConsumerStats } from './consumer-stats.js';
import type { FailurePolicyHandler } from './failure-policy-handler.js';
import type { PartitionContext, Settled } from './partition-context.js';
import type { RetrySchedule } from './retry-schedule.js';

export interface RecordProcessorOptions<P> {
  groupId: string;
  claims: ClaimTransaction<P>;
  failures: FailurePolicyHandler;
  retry: RetrySchedule;
  stats: ConsumerStats;
  log: Logger;
  fail(error: OutboxTailError): void;
}

/**
 * Takes decoded records of one partition to their end: applied (then the
 * offset is committed), or handed to the failure policy. Decides what a
 * failed transaction means: a handler failure uses up an attempt, a
 * transient database error does not, and the consumer's own statements
 * failing again and again stop the consumer.
 */
export class RecordProcessor<P> {
  constructor(private readonly o: RecordProcessorOptions<P>) {}

  /** Up to batch.maxRecords records of one partition, in offset order. */
  async processChunk(chunk: DecodeResult<P>[], ctx: PartitionContext): Promise<Settled> {
    const { stats, log } = this.o;
    if (chunk.length > 1 && chunk.every((d) => d.ok)) {
      const events = chunk.map((d) => (d as { ok: true; event: ConsumedEvent<P> }).event);
      const out = await this.o.claims.apply(events);
      if (out.ok) {
        stats.processed += out.applied;
        stats.duplicatesSkipped += out.duplicates;
        await ctx.commit(events[events.length - 1]!.offset);
        return 'done';
      }
      if (out.kind === 'handler') stats.handlerFailures += 1;
      else if (out.kind === 'transient') stats.transientRetries += 1;
      log.warn(
        {
          topic: ctx.topic,
          partition: ctx.partition,
          fromOffset: events[0]!.offset,
          records: events.length,
          outboxId: out.kind === 'handler' ? out.event?.id : undefined,
          err: errorMessage(out.error),
        },
        'batch transaction failed and was rolled back; applying its records one transaction each',
      );
    }
    // One record per transaction: a batch with a poison record, a failed batch, or batch mode off.
    for (const d of chunk) {
      if (ctx.halted()) return 'halt';
      if ((await this.processOne(d, ctx)) === 'halt') return 'halt';
    }
    return 'done';
  }

  private async processOne(d: DecodeResult<P>, ctx: PartitionContext): Promise<Settled> {
    const { stats, log, retry, groupId } = this.o;
    if (!d.ok) {
      stats.poisonRecords += 1;
      const p = d.poison;
      log.error({ topic: p.topic, partition: p.partition, offset: p.offset, outboxId: p.id ?? undefined, reason: p.reason }, 'poison record');
      // Deterministic: retrying cannot help, so the failure policy applies at once.
      return this.o.failures.settle(
        { id: p.id, reason: p.reason, cause: undefined, attempts: 1, kind: 'poison', key: p.key, topic: p.topic, partition: p.partition, offset: p.offset },
        ctx,
      );
    }
    const event = d.event;
    let handlerFailures = 0;
    let databaseFailures = 0;
    let transient = 0;
    for (;;) {
      if (ctx.halted()) return 'halt';
      const out = await this.o.claims.apply([event]);
      if (out.ok) {
        stats.processed += out.applied;
        stats.duplicatesSkipped += out.duplicates;
        await ctx.commit(event.offset);
        return 'done';
      }
      const where = { topic: event.topic, partition: event.partition, offset: event.offset, outboxId: event.id, err: errorMessage(out.error) };
      if (out.kind === 'handler') {
        stats.handlerFailures += 1;
        handlerFailures += 1;
        log.warn({ ...where, attempt: handlerFailures, maxAttempts: retry.maxAttempts }, 'handler failed; transaction rolled back');
        if (handlerFailures >= retry.maxAttempts) {
          return this.o.failures.settle(
            {
              id: event.id,
              reason: `handler failed ${handlerFailures} time(s): ${errorMessage(out.error)}`,
              cause: out.error,
              attempts: handlerFailures,
              kind: 'handler',
              key: event.key,
              topic: event.topic,
              partition: event.partition,
              offset: event.offset,
              eventType: event.eventType,
              aggregateType: event.aggregateType,
              aggregateId: event.aggregateId,
            },
            ctx,
          );
        }
        await ctx.sleep(retry.delay(handlerFailures));
      } else if (out.kind === 'transient') {
        // A database outage must not use up the record's attempts (nor dead-letter healthy records): retry until it heals or stop().
        stats.transientRetries += 1;
        transient += 1;
        log.warn({ ...where, retry: transient }, 'transient database error; retrying the record');
        await ctx.sleep(retry.delay(Math.min(transient, 20)));
      } else {
        databaseFailures += 1;
        log.warn({ ...where, attempt: databaseFailures }, 'database error in the consumer transaction');
        if (databaseFailures >= retry.maxAttempts) {
          this.o.fail(
            new OutboxTailError(
              'PG_ERROR',
              `consumer group ${groupId}: the transaction for outbox id ${event.id} (${event.topic}/${event.partition}@${event.offset}) failed ${databaseFailures} time(s): ${errorMessage(out.error)}`,
              {
                cause: out.error,
                hint: `check that the ${this.o.claims.processedTable} table exists (migrations/0002_processed_messages.sql) and the role may write it`,
              },
            ),
          );
          return 'halt';
        }
        await ctx.sleep(retry.delay(databaseFailures));
      }
    }
  }
}
