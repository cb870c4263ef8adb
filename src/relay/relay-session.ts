import type { ClientConfig } from 'pg';
import type { Logger } from 'pino';
import { Checkpointer } from '../checkpoint/checkpointer.js';
import type { RelayConfig } from '../config/config-schema.js';
import { EXIT, OutboxTailError } from '../errors/outbox-tail-error.js';
import type { MalformedRow, OutboxEvent, PipelineItem, Transaction } from '../outbox/outbox-event.js';
import { RowMapper } from '../outbox/row-mapper.js';
import { TransactionAssembler } from '../outbox/transaction-assembler.js';
import { Lsn } from '../replication/lsn.js';
import { ReplicationSource } from '../replication/replication-source.js';
import { RecordBuilder } from '../sink/record-builder.js';
import type { Sink, SinkRecord } from '../sink/sink.js';
import { Fifo } from './fifo.js';
import type { RelayStats } from './relay-stats.js';

interface Entry {
  txn: Transaction;
  /** null = a malformed row under the `fail` policy: the relay halts here. */
  record: SinkRecord | null;
  event: OutboxEvent | null;
  malformed: MalformedRow | null;
  bytes: number;
  /** Sent to the dead-letter topic instead of its own (oversize under dead-letter). */
  deadLettered?: boolean;
}

export interface RelaySessionOptions {
  config: RelayConfig;
  connection: ClientConfig;
  sink: Sink;
  logger: Logger;
  stats: RelayStats;
  onStreaming?: () => void;
  /** Seam for tests that prove the safety tests catch a broken frontier. */
  checkpointerFactory?: () => Checkpointer;
}

/** Status updates at least this often, whatever statusIntervalMs says (wal_sender_timeout is 60 s by default). */
const MAX_STATUS_SILENCE_MS = 10_000;

/**
 * One replication session: source -> decoder -> assembler -> sink ->
 * checkpointer, until it fails (the Relay then replays from the slot in a new
 * session) or is asked to stop (drain, confirm, close).
 */
export class RelaySession {
  private readonly cfg: RelayConfig;
  private readonly log: Logger;
  private readonly checkpointer: Checkpointer;
  private readonly builder: RecordBuilder;
  private readonly queue = new Fifo<Entry>();
  private queuedBytes = 0;
  private completedReported = 0;
  private source: ReplicationSource | null = null;
  private draining = false;
  private wake: (() => void) | null = null;
  private failure: OutboxTailError | null = null;
  private failResolve!: (error: OutboxTailError) => void;
  private readonly failed: Promise<OutboxTailError>;

  constructor(private readonly options: RelaySessionOptions) {
    this.cfg = options.config;
    this.log = options.logger.child({ component: 'relay', slot: options.config.slot });
    this.builder = new RecordBuilder(this.cfg.topic);
    this.checkpointer = options.checkpointerFactory?.() ?? new Checkpointer();
    this.failed = new Promise((resolve) => (this.failResolve = resolve));
  }

  /** Resolves after a requested stop drained and confirmed; rejects with the session's failure. */
  async run(): Promise<void> {
    const { cfg, options } = this;
    const mapper = new RowMapper(
      {
        id: cfg.columnId,
        aggregateType: cfg.columnAggregateType,
        aggregateId: cfg.columnAggregateId,
        eventType: cfg.columnEventType,
        payload: cfg.columnPayload,
        headers: cfg.columnHeaders,
        createdAt: cfg.columnCreatedAt,
      },
      cfg.table,
    );
    const assembler = new TransactionAssembler(mapper, {
      begin: (txn) => this.checkpointer.begin(txn),
      item: (item) => this.enqueue(item),
      commit: (txn) => this.checkpointer.committed(txn),
    });
    let statusTimer: NodeJS.Timeout | undefined;
    try {
      const source = new ReplicationSource({
        connection: options.connection,
        slot: cfg.slot!,
        publication: cfg.publication,
        logger: this.log,
        onMessage: (message) => assembler.push(message),
        onKeepalive: (lsn, replyRequested) => {
          this.checkpointer.keepalive(lsn);
          if (replyRequested) source.sendStatus(this.checkpointer.safeLsn);
        },
      });
      this.source = source;
      void source.ended.then((error) => error && this.fail(error));
      const failed = this.failed.then((e) => Promise.reject(e));
      failed.catch(() => undefined);
      // The slot first: a standby (slot held elsewhere) never opens a Kafka producer.
      await Promise.race([source.start(), failed]);
      // Status updates from now on, even while the producer connects (wal_sender_timeout).
      statusTimer = setInterval(() => this.sendStatus(), cfg.statusIntervalMs);
      await Promise.race([options.sink.connect(), failed]);
      this.log.info({ event: 'streaming' }, 'replication started');
      options.stats.state = 'streaming';
      options.onStreaming?.();
      const publisher = this.publishLoop().catch((error: unknown) => this.fail(error));
      const outcome = await Promise.race([publisher.then(() => 'drained' as const), this.failed]);
      if (outcome !== 'drained') throw outcome;
      const lsn = this.checkpointer.safeLsn;
      const acknowledged = await source.flushStatus(lsn, 2_000);
      this.recordConfirm(lsn);
      this.log.info({ event: 'drained', lsn: Lsn.format(lsn), serverReplied: acknowledged }, 'in-flight records published and confirmed');
    } catch (error) {
      throw OutboxTailError.is(error) ? error : this.classify(error);
    } finally {
      if (statusTimer) clearInterval(statusTimer);
      await this.source?.stop();
      await options.sink.disconnect();
    }
  }

  /** Stop reading, publish what is queued, confirm, close. */
  stop(): void {
    this.draining = true;
    this.source?.pause();
    this.wake?.();
  }

  private classify(error: unknown): OutboxTailError {
    return new OutboxTailError('REPLICATION_STREAM_ERROR', `relay session failed: ${(error as Error)?.message ?? error}`, { retriable: true, cause: error });
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = OutboxTailError.is(error) ? error : this.classify(error);
    this.failResolve(this.failure);
    this.wake?.();
  }

  private enqueue(item: PipelineItem): void {
    let entry: Entry;
    if (item.kind === 'event') {
      const record = this.builder.build(item.event);
      entry = { txn: item.event.txn, record, event: item.event, malformed: null, bytes: record.bytes };
      this.options.stats.eventsReceived++;
    } else {
      const row = item.row;
      this.log.warn({ event: 'malformed-row', outboxId: row.id, reason: row.reason, policy: this.cfg.onMalformed }, 'malformed outbox row');
      const record = this.cfg.onMalformed === 'dead-letter' ? this.builder.malformedToDeadLetter(row, this.cfg.deadLetterTopic!) : null;
      entry = { txn: row.txn, record, event: null, malformed: row, bytes: record?.bytes ?? 0 };
    }
    this.checkpointer.dispatched(entry.txn);
    this.queue.push(entry);
    this.queuedBytes += entry.bytes;
    if (this.queue.length >= this.cfg.maxInFlightMessages || this.queuedBytes >= this.cfg.maxInFlightBytes) this.source?.pause();
    this.wake?.();
  }

  private async publishLoop(): Promise<void> {
    const cfg = this.cfg;
    while (!this.failure) {
      if (this.queue.length === 0) {
        if (this.draining) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      if (cfg.batchMaxWaitMs > 0 && !this.draining && this.queue.length < cfg.batchMaxMessages) {
        await new Promise((resolve) => setTimeout(resolve, cfg.batchMaxWaitMs));
      }
      const head = this.queue.peek()!;
      if (head.record === null) await this.halt(this.malformedError(head.malformed!));
      const batch = this.takeBatch();
      this.log.debug({ event: 'batch', records: batch.length }, 'publishing batch');
      try {
        await this.options.sink.send(batch.map((e) => e.record!));
      } catch (error) {
        if (!OutboxTailError.is(error) || error.code !== 'MESSAGE_TOO_LARGE') throw error;
        await this.publishOneByOne(batch.length);
        continue;
      }
      this.acknowledge(batch.length);
      this.options.stats.batches++;
    }
  }

  private takeBatch(): Entry[] {
    const batch: Entry[] = [];
    let bytes = 0;
    for (let i = 0; i < this.queue.length && batch.length < this.cfg.batchMaxMessages; i++) {
      const entry = this.queue.peek(i)!;
      if (entry.record === null) break;
      if (batch.length > 0 && bytes + entry.bytes > this.cfg.batchMaxBytes) break;
      batch.push(entry);
      bytes += entry.bytes;
    }
    return batch;
  }

  /** Kafka refused a batch as too large: find the record(s) it refuses alone and apply --on-oversize. */
  private async publishOneByOne(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const entry = this.queue.peek()!;
      try {
        await this.options.sink.send([entry.record!]);
      } catch (error) {
        if (!OutboxTailError.is(error) || error.code !== 'MESSAGE_TOO_LARGE') throw error;
        const id = entry.event?.id ?? entry.malformed?.id ?? null;
        this.log.warn({ event: 'oversize', outboxId: id, bytes: entry.bytes, topic: entry.record!.topic, policy: this.cfg.onOversize }, 'record too large for Kafka');
        if (this.cfg.onOversize !== 'dead-letter' || !entry.event) {
          return this.halt(
            new OutboxTailError('MESSAGE_TOO_LARGE', `outbox row id=${id} (${entry.bytes} bytes, topic ${entry.record!.topic}, commit LSN ${Lsn.format(entry.txn.commitLsn)}) is larger than Kafka accepts; the slot is not confirmed past it`, {
              hint: "raise the broker's or topic's max.message.bytes, or run with --on-oversize=dead-letter --dead-letter-topic=<topic>",
              exitCode: EXIT.BAD_INPUT,
              cause: error,
            }),
          );
        }
        const pointer = this.builder.deadLetter(entry.event, `oversize: ${entry.bytes} bytes`, entry.record!.topic, this.cfg.deadLetterTopic!);
        await this.options.sink.send([pointer]);
        entry.record = pointer;
        entry.deadLettered = true;
      }
      this.acknowledge(1);
    }
  }

  private acknowledge(count: number): void {
    const stats = this.options.stats;
    for (let i = 0; i < count; i++) {
      const entry = this.queue.shift()!;
      this.queuedBytes -= entry.bytes;
      const deadLetter = entry.event === null || entry.deadLettered === true;
      if (deadLetter) stats.deadLettered++;
      else stats.recordsPublished++;
      stats.onPublished?.(entry.record!.topic, entry.txn.commitTime, deadLetter);
      this.checkpointer.acknowledged(entry.txn);
    }
    if (this.source?.isPaused && !this.draining && this.queue.length < this.cfg.maxInFlightMessages / 2 && this.queuedBytes < this.cfg.maxInFlightBytes / 2) {
      this.source.resume();
    }
  }

  private malformedError(row: MalformedRow): OutboxTailError {
    return new OutboxTailError('MALFORMED_ROW', `outbox row id=${row.id ?? '(unreadable)'} in ${row.table} is malformed: ${row.reason} (commit LSN ${Lsn.format(row.txn.commitLsn)}); the slot is not confirmed past it`, {
      hint: 'fix the row or the --column-* mapping, or run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
      exitCode: EXIT.BAD_INPUT,
    });
  }

  /** Confirm everything before the bad row, then stop for good. */
  private async halt(error: OutboxTailError): Promise<never> {
    const lsn = this.checkpointer.safeLsn;
    await this.source?.flushStatus(lsn, 2_000);
    this.recordConfirm(lsn);
    throw error;
  }

  private sendStatus(): void {
    const source = this.source;
    if (!source || this.failure) return;
    // A replication connection that went silent is dead even without an error:
    // behind a network black hole no FIN or RST ever arrives, our status
    // updates vanish, the walsender times out and frees the slot, and this
    // session would wait for data forever. Like wal_receiver_timeout: ask for
    // a keepalive at half the timeout, give the connection up at the timeout
    // and replay from the slot on a new one.
    const timeout = this.cfg.replicationTimeoutMs;
    const silent = source.silentForMs;
    if (timeout > 0 && silent >= timeout) {
      this.fail(
        new OutboxTailError('PG_UNREACHABLE', `replication slot ${this.cfg.slot}: PostgreSQL sent nothing for ${Math.round(silent / 1000)} s on the replication connection; presuming it dead and reconnecting`, {
          retriable: true,
          hint: 'check the network path to PostgreSQL; --replication-timeout-ms sets how long a silent connection is trusted',
        }),
      );
      return;
    }
    const askForKeepalive = timeout > 0 && silent >= timeout / 2;
    const lsn = this.checkpointer.safeLsn;
    if (askForKeepalive || lsn > source.confirmedLsn || Date.now() - source.lastStatusAt >= MAX_STATUS_SILENCE_MS) {
      source.sendStatus(lsn, askForKeepalive);
      this.recordConfirm(lsn);
    }
  }

  private recordConfirm(lsn: Lsn): void {
    const stats = this.options.stats;
    // Cumulative across sessions: each session's checkpointer counts from zero.
    stats.transactionsConfirmed += this.checkpointer.completed - this.completedReported;
    this.completedReported = this.checkpointer.completed;
    if (lsn > stats.confirmedLsn) {
      stats.confirmedLsn = lsn;
      stats.lastConfirmAt = Date.now();
      this.log.debug({ event: 'confirm', lsn: Lsn.format(lsn) }, 'confirmed');
    }
  }
}
