import type { ClientConfig } from 'pg';
import { LogicalReplicationService } from 'pg-logical-replication';
import type { Logger } from 'pino';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { Lsn } from '../../shared/lsn.js';
import { libraryConnection, type ReplicationConnection } from './library-connection.js';
import { classifyPgError } from '../../postgres/pg-errors.js';
import { decodePgoutput, type PgoutputMessage } from '../decode/pgoutput-decoder.js';
import { encodeStandbyStatus } from './standby-status.js';
import { publicationNamesOption } from './publication-names-option.js';

export interface ReplicationSourceOptions {
  connection: ClientConfig;
  slot: string;
  publication: string;
  /** Ask pgoutput for logical decoding messages too (PostgreSQL 14+). */
  messages?: boolean;
  logger: Logger;
  /** Called synchronously, in stream order. Must not throw. */
  onMessage(message: PgoutputMessage): void;
  /** A primary keepalive: the walsender's position and whether it wants a reply now. */
  onKeepalive(lsn: Lsn, replyRequested: boolean): void;
}

type Parsed = PgoutputMessage | { tag: 'decode-error'; error: unknown };

type ReplicationPlugin = Parameters<LogicalReplicationService['subscribe']>[0];

/** pgoutput v1 without streaming, decoded by our own pure decoder. (The library does not export its plugin base class.) */
class OutboxPgoutputPlugin {
  constructor(readonly options: { publication: string; messages: boolean }) {}
  get name(): string {
    return 'pgoutput';
  }
  start(client: import('pg').Client, slotName: string, lastLsn: string): Promise<unknown> {
    const slot = slotName.replace(/"/g, '""');
    return client.query(
      `START_REPLICATION SLOT "${slot}" LOGICAL ${lastLsn} (proto_version '1', publication_names ${publicationNamesOption(this.options.publication)}${this.options.messages ? ", messages 'true'" : ''})`,
    );
  }
  // The library calls parse() inside the socket's data handler, where a throw
  // would escape into the pg driver; errors travel as values instead.
  parse(buffer: Buffer): Parsed {
    try {
      return decodePgoutput(buffer);
    } catch (error) {
      return { tag: 'decode-error', error };
    }
  }
}

/**
 * One replication connection to one slot. It streams XLogData and keepalives
 * to its callbacks and sends standby status updates with the LSN the caller
 * gives it, nothing else. Every session uses a NEW LogicalReplicationService
 * with no start LSN, so the server resumes from the slot's confirmed_flush_lsn
 * (docs/architecture.md#lsn-rules, rule 9); the library's own acks are disabled (rule 4).
 */
export class ReplicationSource {
  private readonly service: LogicalReplicationService;
  private lastSent: Lsn = Lsn.of(0n);
  private lastSentAt = 0;
  /** When the server last sent anything (XLogData or keepalive); time spent paused does not count. */
  private lastReceivedAt = Date.now();
  /** When the server last sent XLogData (keepalives do not count): what the heartbeat waits on. */
  private lastDataAt = Date.now();
  private closed = false;
  private paused = false;
  private replyWaiters: Array<() => void> = [];
  private endedResolve!: (error: OutboxTailError | null) => void;
  /** Settles once, when the stream ends: with the error, or null after stop(). */
  readonly ended: Promise<OutboxTailError | null>;

  constructor(private readonly options: ReplicationSourceOptions) {
    this.ended = new Promise((resolve) => (this.endedResolve = resolve));
    this.service = new LogicalReplicationService(
      {
        ...options.connection,
        application_name: options.connection.application_name ?? 'outbox-tail',
        // pgoutput writes values with the walsender's settings, which a database or role may change: the
        // created_at header (toRfc3339) needs the ISO form, and UTC keeps it free of zone abbreviations.
        options: [options.connection.options, '-c DateStyle=ISO -c TimeZone=UTC'].filter(Boolean).join(' '),
      },
      { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: false } },
    );
    // At once, not at the first pause or status update: a library without the field fails the session before it streams.
    libraryConnection(this.service);
    this.service.on('data', (_lsn: string, parsed: Parsed) => {
      if (this.closed) return;
      this.lastReceivedAt = Date.now();
      this.lastDataAt = this.lastReceivedAt;
      if (parsed.tag === 'decode-error') {
        this.fail(parsed.error);
        return;
      }
      try {
        options.onMessage(parsed);
      } catch (error) {
        this.fail(error);
      }
    });
    this.service.on('heartbeat', (lsn: string, _ts: number, shouldRespond: boolean) => {
      if (this.closed) return;
      this.lastReceivedAt = Date.now();
      const waiters = this.replyWaiters;
      this.replyWaiters = [];
      for (const w of waiters) w();
      try {
        options.onKeepalive(Lsn.parse(lsn), shouldRespond);
      } catch (error) {
        this.fail(error);
      }
    });
    this.service.on('error', (error: unknown) => this.fail(error));
  }

  /** Resolves once the server started streaming; rejects (classified) if it refused. */
  async start(): Promise<void> {
    const started = new Promise<void>((resolve) => this.service.once('start', () => resolve()));
    const subscription = this.service
      .subscribe(
        new OutboxPgoutputPlugin({ publication: this.options.publication, messages: this.options.messages ?? false }) as unknown as ReplicationPlugin,
        this.options.slot,
      )
      .then(
        () => this.fail(new OutboxTailError('REPLICATION_STREAM_ERROR', 'the server ended the replication stream', { retriable: true })),
        (error: unknown) => this.fail(error),
      );
    await Promise.race([started, subscription.then(() => this.ended.then((e) => Promise.reject(e ?? new Error('stopped'))))]);
  }

  /** Stop reading from the socket (backpressure). Status updates still go out. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.connection()?.stream?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    // Nothing was read while paused: the silence starts now.
    this.lastReceivedAt = Date.now();
    this.connection()?.stream?.resume();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Last LSN sent to the server as flushed. */
  get confirmedLsn(): Lsn {
    return this.lastSent;
  }

  get lastStatusAt(): number {
    return this.lastSentAt;
  }

  /**
   * How long the server has sent nothing while we were reading (0 while
   * paused: unread keepalives wait in the socket then). A connection whose
   * peer vanished without a FIN or RST (a network black hole, a dropped NAT
   * entry) only shows up here.
   */
  get silentForMs(): number {
    return this.paused ? 0 : Date.now() - this.lastReceivedAt;
  }

  /** How long no XLogData arrived (keepalives aside). */
  get streamIdleForMs(): number {
    return Date.now() - this.lastDataAt;
  }

  /**
   * Sends a standby status update. The LSN never goes backwards (docs/architecture.md#lsn-rules, rule 7); an
   * LSN of 0 (nothing confirmed yet this session) is ignored by the server but
   * still counts as a reply for wal_sender_timeout.
   */
  sendStatus(lsn: Lsn, replyRequested = false): void {
    if (this.closed) return;
    const connection = this.connection();
    if (!connection) return;
    if (lsn > this.lastSent) this.lastSent = lsn;
    connection.sendCopyFromChunk(encodeStandbyStatus(this.lastSent, Date.now(), replyRequested));
    this.lastSentAt = Date.now();
  }

  /** Sends the LSN with a reply request and waits (bounded) for the server's keepalive, so it has read it. */
  async flushStatus(lsn: Lsn, timeoutMs: number): Promise<boolean> {
    if (this.closed) return false;
    const replied = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.replyWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    // Keepalives are only read while the socket flows.
    this.connection()?.stream?.resume();
    this.sendStatus(lsn, true);
    return replied;
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.endedResolve(null);
    await this.service.destroy().catch(() => undefined);
  }

  private fail(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    const classified = classifyPgError(error, `replication slot ${this.options.slot}`, this.options.slot);
    this.endedResolve(classified);
    void this.service.destroy().catch(() => undefined);
  }

  private connection(): ReplicationConnection | null {
    return libraryConnection(this.service);
  }
}
