import type { Logger } from 'pino';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { Lsn } from '../../shared/lsn.js';

/** The replication connection's side of standby status updates (ReplicationSource has it). */
export interface StatusChannel {
  sendStatus(lsn: Lsn, replyRequested?: boolean): void;
  flushStatus(lsn: Lsn, timeoutMs: number): Promise<boolean>;
  /** Last LSN sent as flushed. */
  readonly confirmedLsn: Lsn;
  readonly lastStatusAt: number;
  /** How long the server has sent nothing while we were reading. */
  readonly silentForMs: number;
}

/** What may be confirmed (the checkpointer's ack frontier). */
export interface ConfirmFrontier {
  readonly safeLsn: Lsn;
  /** Transactions behind the frontier so far. */
  readonly completed: number;
}

/** The counters confirms are recorded in (RelayStats has them); cumulative across sessions. */
export interface ConfirmCounters {
  transactionsConfirmed: number;
  confirmedLsn: Lsn;
  lastConfirmAt: number;
}

export interface StatusSenderOptions {
  channel: StatusChannel;
  frontier: ConfirmFrontier;
  counters: ConfirmCounters;
  statusIntervalMs: number;
  /** 0 = never presume the connection dead. */
  replicationTimeoutMs: number;
  slot: string;
  logger: Logger;
  /** The connection sent nothing for replicationTimeoutMs: the session must reconnect. */
  onDead(error: OutboxTailError): void;
}

/** Status updates at least this often, whatever statusIntervalMs says (wal_sender_timeout is 60 s by default). */
const MAX_STATUS_SILENCE_MS = 10_000;
/** How long a final confirm waits for the server to show it read it. */
const FLUSH_TIMEOUT_MS = 2_000;

/**
 * Sends standby status updates carrying only the frontier's safe LSN, never
 * the last received one: on a timer, when a keepalive asks, and once more
 * before the session ends. It also notices a connection gone silent.
 */
export class StatusSender {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private completedReported = 0;

  constructor(private readonly options: StatusSenderOptions) {}

  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setInterval(() => this.tick(), this.options.statusIntervalMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A keepalive asked for a reply now. */
  reply(): void {
    this.options.channel.sendStatus(this.options.frontier.safeLsn);
  }

  /** One timer period: give up a silent connection, or send the safe LSN when it moved or the server waited long enough. */
  tick(): void {
    if (this.stopped) return;
    const { channel, frontier, replicationTimeoutMs: timeout } = this.options;
    // A replication connection that went silent is dead even without an error:
    // behind a network black hole no FIN or RST ever arrives, our status
    // updates vanish, the walsender times out and frees the slot, and this
    // session would wait for data forever. Like wal_receiver_timeout: ask for
    // a keepalive at half the timeout, give the connection up at the timeout
    // and replay from the slot on a new one.
    const silent = channel.silentForMs;
    if (timeout > 0 && silent >= timeout) {
      this.stop();
      this.options.onDead(
        new OutboxTailError(
          'PG_UNREACHABLE',
          `replication slot ${this.options.slot}: PostgreSQL sent nothing for ${Math.round(silent / 1000)} s on the replication connection; presuming it dead and reconnecting`,
          {
            retriable: true,
            hint: 'check the network path to PostgreSQL; --replication-timeout-ms sets how long a silent connection is trusted',
          },
        ),
      );
      return;
    }
    const askForKeepalive = timeout > 0 && silent >= timeout / 2;
    const lsn = frontier.safeLsn;
    if (askForKeepalive || lsn > channel.confirmedLsn || Date.now() - channel.lastStatusAt >= MAX_STATUS_SILENCE_MS) {
      channel.sendStatus(lsn, askForKeepalive);
      this.record(lsn);
    }
  }

  /** Sends the safe LSN with a reply request and waits (bounded) until the server read it. */
  async flush(): Promise<{ lsn: Lsn; serverReplied: boolean }> {
    const lsn = this.options.frontier.safeLsn;
    const serverReplied = await this.options.channel.flushStatus(lsn, FLUSH_TIMEOUT_MS);
    this.record(lsn);
    return { lsn, serverReplied };
  }

  private record(lsn: Lsn): void {
    const { counters, frontier } = this.options;
    // Each session's frontier counts from zero; the counters run across sessions.
    counters.transactionsConfirmed += frontier.completed - this.completedReported;
    this.completedReported = frontier.completed;
    if (lsn > counters.confirmedLsn) {
      counters.confirmedLsn = lsn;
      counters.lastConfirmAt = Date.now();
      this.options.logger.debug({ event: 'confirm', lsn: Lsn.format(lsn) }, 'confirmed');
    }
  }
}
