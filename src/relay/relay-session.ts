import type { ClientConfig } from 'pg';
import type { Logger } from 'pino';
import { Checkpointer } from '../pipeline/checkpoint/checkpointer.js';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { columnMapping, type ColumnSettings } from '../pipeline/assemble/outbox-columns.js';
import { RowMapper } from '../pipeline/assemble/row-mapper.js';
import { TransactionAssembler, type MessageMapper } from '../pipeline/assemble/transaction-assembler.js';
import { badRowPolicies, type BadRowSettings } from '../pipeline/publish/bad-row-policy.js';
import type { InFlightLimits } from '../pipeline/publish/backpressure.js';
import type { BatchLimits } from '../pipeline/publish/batching.js';
import { AtLeastOncePublisher } from '../pipeline/publish/at-least-once-publisher.js';
import { ExactlyOncePublisher } from '../pipeline/publish/exactly-once-publisher.js';
import type { PublishingStageOptions, PublishQueue } from '../pipeline/publish/publish-queue.js';
import { Lsn } from '../shared/lsn.js';
import { Heartbeat } from '../pipeline/source/heartbeat.js';
import { ReplicationSource } from '../pipeline/source/replication-source.js';
import { StatusSender, type ConfirmFrontier } from '../pipeline/checkpoint/status-sender.js';
import { createRecordBuilder } from '../pipeline/publish/record-format/create-record-builder.js';
import type { ValueEncoder } from '../pipeline/publish/record-format/value-encoder.js';
import { alreadyPublished, type SkipRule } from '../pipeline/publish/skip-published.js';
import type { Watermark } from '../sink/watermark.js';
import type { PgSettings } from '../postgres/pg-connection.js';
import { withPgClient } from '../postgres/with-pg-client.js';
import { readSlot } from '../postgres/slots/slot-catalog.js';
import { embedsPayload, type RecordFormat } from '../pipeline/publish/record-format/record-formats.js';
import type { RecordHeaderName } from '../pipeline/publish/record-format/record-headers.js';
import { isTransactional, type Sink } from '../sink/sink.js';
import type { RelayStats } from '../pipeline/relay-stats.js';

/**
 * What one replication session uses, named as the options name it: the slot
 * and publication it streams, what it reads (--source, the table and its
 * columns, --message-prefix), the record format (--topic, --record-headers),
 * batching and in-flight limits, the bad-row policies, the status and
 * heartbeat intervals, and the offsets topic (for its messages).
 */
export interface SessionSettings extends ColumnSettings, BatchLimits, InFlightLimits, BadRowSettings {
  slot: string;
  publication: string;
  source: 'table' | 'messages' | 'both';
  messagePrefix: string;
  table: string;
  topic: string;
  recordHeaders: readonly RecordHeaderName[];
  recordFormat: RecordFormat;
  cloudeventsSource: string;
  statusIntervalMs: number;
  replicationTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** Where the heartbeat writes: the primary (--primary-url) when the relay decodes on a standby; null: the relay's own server. */
  heartbeatPg?: PgSettings | null;
  offsetsTopic: string;
  /** --value-format avro|json-schema, or null (json). */
  valueEncoder?: ValueEncoder | null;
}

export interface RelaySessionOptions {
  settings: SessionSettings;
  /** The normal (non-replication) connection: the slot position check and the heartbeat. */
  pg: PgSettings;
  connection: ClientConfig;
  sink: Sink;
  logger: Logger;
  stats: RelayStats;
  onStreaming?: () => void;
  /** Seam for tests that prove the safety tests catch a broken frontier. */
  checkpointerFactory?: () => Checkpointer;
  /** Seam for the exactly-once negative controls: a deliberately wrong skip rule. */
  skipRule?: SkipRule;
  /** Seam for the --source messages negative controls: a deliberately wrong message mapping. */
  messageMapper?: MessageMapper;
}

/** The wired stages of one session. */
interface Stages {
  readonly checkpointer: Checkpointer;
  readonly source: ReplicationSource;
  readonly publisher: PublishQueue;
  readonly exactlyOnce: ExactlyOncePublisher | null;
  readonly status: StatusSender;
}

/**
 * One replication session: source -> decoder -> assembler -> publishing stage
 * -> sink, with the checkpointer tracking every transaction and the status
 * sender confirming its frontier. It runs until it fails (the Relay then
 * replays from the slot in a new session) or is asked to stop (drain,
 * confirm, close).
 */
export class RelaySession {
  private readonly log: Logger;
  private source: ReplicationSource | null = null;
  private publisher: PublishQueue | null = null;
  private status: StatusSender | null = null;
  private heartbeat: Heartbeat | null = null;
  /** Exactly-once: the watermark's LSN at start; everything up to it is in Kafka already. */
  private startLsn = Lsn.of(0n);
  private stopRequested = false;
  private failure: OutboxTailError | null = null;
  private failResolve!: (error: OutboxTailError) => void;
  /** Rejects with the session's first failure, wherever it came from. */
  private readonly failed: Promise<never>;

  constructor(private readonly options: RelaySessionOptions) {
    this.log = options.logger.child({ component: 'relay', slot: options.settings.slot });
    this.failed = new Promise<OutboxTailError>((resolve) => (this.failResolve = resolve)).then((error) => Promise.reject(error));
    this.failed.catch(() => undefined);
  }

  /** Resolves after a requested stop drained and confirmed; rejects with the session's failure. */
  async run(): Promise<void> {
    const { sink, stats } = this.options;
    try {
      const stages = this.wireStages();
      stats.frontier = stages.checkpointer;
      this.source = stages.source;
      this.publisher = stages.publisher;
      this.status = stages.status;
      if (this.stopRequested) this.stop();
      void stages.source.ended.then((error) => error && this.fail(error));
      await this.stream(stages);
    } catch (error) {
      throw OutboxTailError.is(error) ? error : this.classify(error);
    } finally {
      this.heartbeat?.stop();
      this.status?.stop();
      await this.source?.stop();
      await sink.disconnect();
    }
  }

  /**
   * The stages of one session, declared in stream order: source (with the
   * decoder) -> assembler -> publisher (-> sink) -> status sender, each
   * checkpointed by the checkpointer. A stage hands its output to the next
   * through `downstream`, bound once all exist; nothing else runs here.
   */
  private wireStages(): Stages {
    const { settings: config, sink, stats } = this.options;
    const checkpointer = this.options.checkpointerFactory?.() ?? new Checkpointer();
    const downstream: { assembler?: TransactionAssembler; publisher?: PublishQueue; status?: StatusSender } = {};

    const source = new ReplicationSource({
      connection: this.options.connection,
      slot: config.slot,
      publication: config.publication,
      messages: config.source !== 'table',
      logger: this.log,
      onMessage: (message) => downstream.assembler!.push(message),
      onKeepalive: (lsn, replyRequested) => {
        checkpointer.keepalive(lsn);
        if (replyRequested) downstream.status!.reply();
      },
    });
    const assembler = new TransactionAssembler(
      new RowMapper(columnMapping(config), config.table, { jsonPayload: embedsPayload(config.recordFormat) }),
      {
        begin: (txn) => checkpointer.begin(txn),
        item: (item) => downstream.publisher!.enqueue(item),
        commit: (txn) => {
          checkpointer.committed(txn);
          downstream.publisher!.committed(txn);
        },
      },
      { source: config.source, messagePrefix: config.messagePrefix, ...(this.options.messageMapper ? { mapMessage: this.options.messageMapper } : {}) },
    );
    const publishing: PublishingStageOptions = {
      sink,
      builder: createRecordBuilder(config),
      limits: config,
      policies: badRowPolicies(config),
      flow: source,
      acks: checkpointer,
      confirm: () => downstream.status!.flush(),
      counters: stats,
      logger: this.log,
      valueEncoder: config.valueEncoder ?? null,
    };
    const transactional = isTransactional(sink) ? sink : null;
    const exactlyOnce = transactional
      ? new ExactlyOncePublisher(publishing, { sink: transactional, skipRule: this.options.skipRule ?? alreadyPublished, frontier: checkpointer })
      : null;
    const publisher = exactlyOnce ?? new AtLeastOncePublisher(publishing);
    const status = new StatusSender({
      channel: source,
      frontier: exactlyOnce ? this.watermarkFrontier(checkpointer, exactlyOnce) : checkpointer,
      counters: stats,
      statusIntervalMs: config.statusIntervalMs,
      replicationTimeoutMs: config.replicationTimeoutMs,
      slot: config.slot,
      logger: this.log,
      onDead: (error) => this.fail(error),
    });
    Object.assign(downstream, { assembler, publisher, status });
    return { checkpointer, source, publisher, exactlyOnce, status };
  }

  /**
   * Exactly-once: never confirm past the last watermark in a committed Kafka transaction (the watermark rule), nor past
   * the ack frontier (rule 1); everything up to the start watermark is in Kafka already.
   */
  private watermarkFrontier(checkpointer: Checkpointer, publisher: ExactlyOncePublisher): ConfirmFrontier {
    const startLsn = () => this.startLsn;
    return {
      get safeLsn(): Lsn {
        const published: Lsn = publisher.publishedLsn;
        const acked: Lsn = checkpointer.safeLsn;
        return acked < published ? Lsn.max(acked, startLsn()) : published;
      },
      get completed(): number {
        return checkpointer.completed;
      },
    };
  }

  /** Runs the wired stages: the slot first, then the sink (and, exactly-once, its watermark), the heartbeat, then publishing until stopped. */
  private async stream({ source, publisher, exactlyOnce, status }: Stages): Promise<void> {
    const { settings: config, sink, stats } = this.options;
    // The slot first: a standby (slot held elsewhere) never opens a Kafka producer.
    await this.unlessFailed(source.start());
    // Status updates from now on, even while the producer connects (wal_sender_timeout).
    status.start();
    await this.unlessFailed(sink.connect());
    if (exactlyOnce && isTransactional(sink)) {
      const watermark = await this.unlessFailed(sink.readWatermark());
      await this.unlessFailed(this.checkSlotPosition(watermark));
      exactlyOnce.startFrom(watermark);
      this.startLsn = watermark?.lsn ?? this.startLsn;
      this.log.info(
        { event: 'watermark', lsn: watermark ? Lsn.format(watermark.lsn) : null, relayId: watermark?.relayId ?? null },
        watermark ? 'exactly-once: resuming after the watermark' : 'exactly-once: no watermark for this slot yet',
      );
      // Confirm the watermark now: PostgreSQL need not replay what Kafka already holds.
      if (watermark) void status.flush().catch(() => undefined);
    }
    this.heartbeat = new Heartbeat({
      config: { ...(config.heartbeatPg ?? this.options.pg), heartbeatIntervalMs: config.heartbeatIntervalMs, messagePrefix: config.messagePrefix },
      idleForMs: () => source.streamIdleForMs,
      logger: this.log,
    });
    this.heartbeat.start();
    this.log.info({ event: 'streaming' }, 'replication started');
    stats.state = 'streaming';
    this.options.onStreaming?.();
    await this.unlessFailed(publisher.run());
    const { lsn, serverReplied } = await status.flush();
    this.log.info({ event: 'drained', lsn: Lsn.format(lsn), serverReplied }, 'in-flight records published and confirmed');
  }

  /** Stop reading, publish what is queued, confirm, close. */
  stop(): void {
    this.stopRequested = true;
    this.source?.pause();
    this.publisher?.drain();
  }

  /**
   * Exactly-once: the slot must not be confirmed past the watermark. This relay
   * never does that, so someone else moved the slot (pg_replication_slot_advance,
   * a relay in at-least-once mode): what was committed in between may never
   * reach Kafka, and starting would hide it.
   */
  private async checkSlotPosition(watermark: Watermark | null): Promise<void> {
    if (!watermark) return;
    const { settings: config, pg } = this.options;
    const confirmed = await withPgClient(pg, async (client) => {
      const lsn = (await readSlot(client, config.slot))?.confirmedFlushLsn;
      return lsn ? Lsn.parse(lsn) : null;
    });
    if (confirmed === null || confirmed <= watermark.lsn) return;
    throw new OutboxTailError(
      'WATERMARK_BEHIND_SLOT',
      `exactly-once delivery: slot ${config.slot} is confirmed up to ${Lsn.format(confirmed)}, past the watermark ${Lsn.format(watermark.lsn)} in ${config.offsetsTopic}; outbox rows committed between the two may be missing from Kafka, and PostgreSQL will not send them again`,
      {
        hint: `check Kafka for outbox rows committed between ${Lsn.format(watermark.lsn)} and ${Lsn.format(confirmed)} (gap-fill them from the outbox table if needed); if the slot was moved on purpose or last ran with --delivery at-least-once, delete the watermark (a tombstone for key ${config.slot} in ${config.offsetsTopic}) and start again`,
      },
    );
  }

  private unlessFailed<T>(step: Promise<T>): Promise<T> {
    return Promise.race([step, this.failed]);
  }

  private classify(error: unknown): OutboxTailError {
    return new OutboxTailError('REPLICATION_STREAM_ERROR', `relay session failed: ${(error as Error)?.message ?? error}`, { retriable: true, cause: error });
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = OutboxTailError.is(error) ? error : this.classify(error);
    this.failResolve(this.failure);
    this.status?.stop();
    this.publisher?.abort();
  }
}
