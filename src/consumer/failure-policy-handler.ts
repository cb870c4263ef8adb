import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { classifyKafkaError } from '../kafka/kafkajs/kafka-errors.js';
import type { ClaimTransaction } from './claim-transaction.js';
import { errorMessage, isTransientPgError } from './consumer-errors.js';
import type { FailurePolicy } from './consumer-options.js';
import type { ConsumerStats } from './consumer-stats.js';
import { buildDeadLetterMessage } from './dead-letter.js';
import type { PartitionContext, Settled } from './partition-context.js';
import type { RetrySchedule } from './retry-schedule.js';

/** A record that will not succeed: poison (cannot be decoded) or out of handler attempts. */
export interface RecordFailure {
  id: string | null;
  reason: string;
  cause: unknown;
  attempts: number;
  kind: 'handler' | 'poison';
  key: string | null;
  topic: string;
  partition: number;
  offset: string;
  eventType?: string | undefined;
  aggregateType?: string | undefined;
  aggregateId?: string | undefined;
}

export interface FailurePolicyHandlerOptions {
  policy: FailurePolicy;
  groupId: string;
  /** Required with policy 'dead-letter' (validateOptions checks it). */
  deadLetterTopic?: string | undefined;
  allowAutoTopicCreation?: boolean | undefined;
  claims: Pick<ClaimTransaction<unknown>, 'claimOnly'>;
  retry: RetrySchedule;
  stats: ConsumerStats;
  log: Logger;
  /** Aborted by stop() and by a fatal error. */
  signal: AbortSignal;
  fail(error: OutboxTailError): void;
}

/**
 * `onFailure` carried out for a record that failed for good: 'stop' ends the
 * consumer with the record's offset uncommitted; 'dead-letter' publishes a
 * pointer record, claims the id and only then commits past it. Owns the
 * dead-letter producer, which exists only under that policy.
 */
export class FailurePolicyHandler {
  private producer: Producer | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly o: FailurePolicyHandlerOptions,
  ) {}

  /** Connects the dead-letter producer before the first record can need it (a broker refusing it fails start(), not a record). */
  async connect(): Promise<void> {
    if (this.o.policy !== 'dead-letter') return;
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: this.o.allowAutoTopicCreation ?? true,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await this.producer.connect();
  }

  async disconnect(): Promise<void> {
    await this.producer?.disconnect().catch((error: unknown) => this.o.log.warn({ err: errorMessage(error) }, 'disconnecting the dead-letter producer'));
  }

  /** The record failed for good: stop, or dead-letter it, mark its id processed and commit its offset. */
  async settle(f: RecordFailure, ctx: PartitionContext): Promise<Settled> {
    const { groupId, log, retry, signal } = this.o;
    const at = `${f.topic}/${f.partition}@${f.offset}`;
    if (this.o.policy === 'stop') {
      const message =
        f.kind === 'poison'
          ? `consumer group ${groupId}: poison record at ${at}: ${f.reason}`
          : `consumer group ${groupId}: outbox id ${f.id} at ${at}: ${f.reason}`;
      this.o.fail(
        f.kind === 'poison'
          ? new OutboxTailError('CONSUMER_POISON_RECORD', message, {
              exitCode: EXIT.BAD_INPUT,
              hint: 'fix or remove the record, or run with onFailure "dead-letter"',
            })
          : new OutboxTailError('CONSUMER_HANDLER_FAILED', message, {
              cause: f.cause,
              hint: 'fix the handler or the data it needs and restart; its offset was not committed, so the record is retried',
            }),
      );
      return 'halt';
    }

    const topic = this.o.deadLetterTopic!;
    const message = buildDeadLetterMessage({
      id: f.id,
      error: f.kind === 'poison' ? `poison: ${f.reason}` : f.reason,
      consumerGroup: groupId,
      topic: f.topic,
      partition: f.partition,
      offset: f.offset,
      key: f.key,
      attempts: f.attempts,
      eventType: f.eventType,
      aggregateType: f.aggregateType,
      aggregateId: f.aggregateId,
    });
    // 1. publish (acks=all) first: a crash before the next steps only repeats the dead letter, never loses it.
    // A stop() during these steps still finishes them; only retries after a failure give way to it.
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1 && signal.aborted) return 'halt';
      try {
        await this.producer!.send({ topic, acks: -1, messages: [message] });
        break;
      } catch (error) {
        const e = classifyKafkaError(error, `dead-lettering ${at} to ${topic}`);
        log.warn({ code: e.code, err: e.message, attempt }, 'publishing the dead letter failed');
        if (!e.retriable || attempt >= retry.maxAttempts) {
          this.o.fail(e);
          return 'halt';
        }
        await ctx.sleep(retry.delay(attempt));
      }
    }
    // 2. mark the id processed, so replays of it are skipped as duplicates.
    if (f.id !== null) {
      for (let attempt = 1; ; attempt++) {
        if (attempt > 1 && signal.aborted) return 'halt';
        try {
          await this.o.claims.claimOnly([f.id]);
          break;
        } catch (error) {
          log.warn({ err: errorMessage(error), attempt }, 'recording the dead-lettered id as processed failed');
          if (!isTransientPgError(error) && attempt >= retry.maxAttempts) {
            this.o.fail(new OutboxTailError('PG_ERROR', `recording dead-lettered outbox id ${f.id} as processed: ${errorMessage(error)}`, { cause: error }));
            return 'halt';
          }
          await ctx.sleep(retry.delay(Math.min(attempt, 20)));
        }
      }
    }
    this.o.stats.deadLettered += 1;
    log.warn({ topic: f.topic, partition: f.partition, offset: f.offset, outboxId: f.id ?? undefined, deadLetterTopic: topic }, 'record dead-lettered');
    // 3. only now move the offset past it.
    await ctx.commit(f.offset);
    return 'done';
  }
}
