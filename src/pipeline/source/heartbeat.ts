import type { Logger } from 'pino';
import type { PgSettings } from '../../postgres/pg-connection.js';
import { withPgClient } from '../../postgres/with-pg-client.js';

/** Never the event prefix: the assembler ignores every other prefix, so a heartbeat can never become an event. */
export function heartbeatPrefix(messagePrefix: string): string {
  return `${messagePrefix}-heartbeat`;
}

export interface HeartbeatOptions {
  /** --heartbeat-interval-ms, --message-prefix and the connection the heartbeat is written on. */
  config: PgSettings & { heartbeatIntervalMs: number; messagePrefix: string };
  /** How long the replication stream has carried no data. */
  idleForMs(): number;
  logger: Logger;
}

/**
 * --heartbeat-interval-ms: on a database where nothing at all is written, the
 * walsender has no new position to report, so the slot (and the WAL it
 * retains) cannot move. A small non-transactional message is WAL the
 * walsender decodes; the keepalive that follows carries a position past it,
 * which the checkpointer confirms when nothing is open or in flight
 * (docs/architecture.md#lsn-rules, rule 5). Non-transactional, so it needs no
 * transaction id and commits nothing. Best effort: a failed heartbeat is
 * logged and tried again at the next interval, it never ends the session.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private lastSentAt = 0;

  constructor(private readonly options: HeartbeatOptions) {}

  start(): void {
    const interval = this.options.config.heartbeatIntervalMs;
    if (interval <= 0 || this.timer) return;
    // Check a few times per interval, so a heartbeat goes out at most about a quarter interval late.
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(interval / 4)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    const { config, logger } = this.options;
    const interval = config.heartbeatIntervalMs;
    if (this.running || this.options.idleForMs() < interval || Date.now() - this.lastSentAt < interval) return;
    this.running = true;
    try {
      const lsn = await withPgClient(config, async (client) => {
        const { rows } = await client.query<{ lsn: string }>(`select pg_logical_emit_message(false, $1, '')::text as lsn`, [
          heartbeatPrefix(config.messagePrefix),
        ]);
        return rows[0]!.lsn;
      });
      this.lastSentAt = Date.now();
      logger.debug({ event: 'heartbeat', lsn }, 'heartbeat message emitted');
    } catch (error) {
      this.lastSentAt = Date.now();
      logger.warn(
        { event: 'heartbeat-failed', code: (error as { code?: string }).code, err: (error as Error).message },
        'heartbeat failed; retrying at the next interval',
      );
    } finally {
      this.running = false;
    }
  }
}
