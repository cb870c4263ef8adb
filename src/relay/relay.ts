import type { Logger } from 'pino';
import type { Checkpointer } from '../pipeline/checkpoint/checkpointer.js';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { explainSlotInvalidated } from './preflight.js';
import { createKafkaSink, type SinkSettings } from '../sink/create-sink.js';
import type { SinkFactory } from '../sink/create-sink.js';
import type { SkipRule } from '../pipeline/publish/skip-published.js';
import { backoffDelay } from '../shared/backoff.js';
import { pgConnection, type PgSettings } from '../postgres/pg-connection.js';
import { passwordRotates } from '../postgres/pg-password-source.js';
import { RelaySession, type SessionSettings } from './relay-session.js';
import type { MessageMapper } from '../pipeline/assemble/transaction-assembler.js';
import { RelayStats } from '../pipeline/relay-stats.js';
import { PositionRecorder } from '../pipeline/checkpoint/position-recorder.js';

/** How often the ack frontier's commit time is written for outbox-tail recover (a lost slot costs at most this much more replay). */
const POSITION_INTERVAL_MS = 5_000;

/** The supervisor's own settings: its slot, the restart backoff, the standby's retry interval. */
export interface SupervisorSettings {
  slot: string;
  restartBackoffInitialMs: number;
  restartBackoffMaxMs: number;
  standbyRetryMs: number;
}

export interface RelayOptions {
  supervisor: SupervisorSettings;
  /** Each session's settings; a new session (and sink) after every retriable failure. */
  session: SessionSettings;
  sink: SinkSettings;
  /** The normal (non-replication) PostgreSQL connection; the replication connection is made from it too. */
  pg: PgSettings;
  logger: Logger;
  /** A new sink per session (default: the --kafka-client sink). */
  sinkFactory?: SinkFactory;
  checkpointerFactory?: () => Checkpointer;
  /** Exactly-once negative controls only: a deliberately wrong skip rule. */
  skipRule?: SkipRule;
  /** --source messages negative controls only: a deliberately wrong message mapping. */
  messageMapper?: MessageMapper;
  /** --on-slot-lost recover: rebuilds a dropped or invalidated slot; the next session streams from the new one. */
  recoverSlot?: () => Promise<void>;
}

/**
 * The daemon's supervisor: runs replication sessions until stopped. Any
 * retriable failure tears the session down and replays from the slot with
 * exponential backoff and jitter; a slot held by another relay makes this one
 * a standby that retries until it takes over; anything else is fatal.
 */
export class Relay {
  readonly stats = new RelayStats();
  private readonly log: Logger;
  private session: RelaySession | null = null;
  private stopping = false;
  private wakeSleep: (() => void) | null = null;

  constructor(private readonly options: RelayOptions) {
    this.log = options.logger.child({ component: 'supervisor', slot: options.supervisor.slot });
  }

  async run(): Promise<void> {
    const { supervisor, pg } = this.options;
    const recorder = new PositionRecorder({
      connection: pgConnection(pg),
      slot: supervisor.slot,
      intervalMs: POSITION_INTERVAL_MS,
      logger: this.log,
      frontier: () => this.stats.frontier,
    });
    recorder.start();
    try {
      await this.supervise();
    } finally {
      await recorder.stop();
    }
  }

  private async supervise(): Promise<void> {
    const { supervisor: config, session: settings, sink, pg, logger } = this.options;
    const makeSink = this.options.sinkFactory ?? createKafkaSink;
    let attempt = 0;
    let standbySince = 0;
    while (!this.stopping) {
      try {
        // Inside the try: a --database-url-file being rewritten fails this attempt (retried), not the relay.
        const session = new RelaySession({
          settings,
          pg,
          connection: pgConnection(pg),
          sink: makeSink(sink, logger),
          logger,
          stats: this.stats,
          ...(this.options.checkpointerFactory ? { checkpointerFactory: this.options.checkpointerFactory } : {}),
          ...(this.options.skipRule ? { skipRule: this.options.skipRule } : {}),
          ...(this.options.messageMapper ? { messageMapper: this.options.messageMapper } : {}),
          onStreaming: () => {
            if (standbySince) this.log.info({ event: 'takeover', waitedMs: Date.now() - standbySince }, 'slot became free: this relay took over');
            standbySince = 0;
            attempt = 0;
          },
        });
        this.session = session;
        await session.run();
        if (this.stopping) break;
      } catch (raw) {
        let error = OutboxTailError.is(raw) ? raw : new OutboxTailError('REPLICATION_STREAM_ERROR', String(raw), { retriable: true, cause: raw });
        // Name PostgreSQL's cause of the invalidation (and its fix) in the log and the exit message.
        if (error.code === 'SLOT_INVALIDATED') error = await explainSlotInvalidated({ ...pg, slot: settings.slot }, error);
        // A password read at every connection may be rotated in the database before its source has the new one.
        if (error.code === 'PG_AUTH_FAILED' && passwordRotates(pg)) {
          error = new OutboxTailError('PG_AUTH_FAILED', error.message, {
            retriable: true,
            hint: "the password source is read again at the next attempt; if this repeats, check it holds the role's current password",
            cause: error,
          });
        }
        if (this.stopping && error.retriable) break;
        this.stats.restarts[error.code] = (this.stats.restarts[error.code] ?? 0) + 1;
        if (error.code === 'SLOT_ACTIVE') {
          if (!standbySince) {
            standbySince = Date.now();
            this.log.info({ event: 'standby', code: error.code }, `${error.message}; waiting as a standby`);
          }
          this.stats.state = 'standby';
          await this.sleep(config.standbyRetryMs);
          continue;
        }
        if ((error.code === 'SLOT_MISSING' || error.code === 'SLOT_INVALIDATED') && this.options.recoverSlot) {
          this.log.warn(
            { event: 'slot-lost', code: error.code, err: error.message, hint: error.hint },
            'slot lost: --on-slot-lost recover rebuilds it from the outbox table',
          );
          this.stats.state = 'reconnecting';
          await this.options.recoverSlot();
          continue;
        }
        if (!error.retriable) {
          this.stats.state = 'stopped';
          throw error;
        }
        attempt++;
        const delay = backoffDelay(attempt, config.restartBackoffInitialMs, config.restartBackoffMaxMs);
        this.stats.state = 'reconnecting';
        this.log.warn(
          { event: 'restart', code: error.code, attempt, delayMs: delay, err: error.message },
          'relay session failed; replaying from the slot after a delay',
        );
        await this.sleep(delay);
      } finally {
        this.session = null;
      }
    }
    this.stats.state = 'stopped';
  }

  /** Graceful: stop reading, publish and confirm what is in flight, return from run(). */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stats.state = 'stopping';
    this.session?.stop();
    this.wakeSleep?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleep = done;
    });
  }
}
