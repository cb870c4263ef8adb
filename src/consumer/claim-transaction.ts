import type pg from 'pg';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import type { ConsumedEvent } from './consumed-event.js';
import { isTransientPgError } from './consumer-errors.js';
import type { EventHandler } from './consumer-options.js';
import { inConsumerSpan } from './consumer-span.js';
import { insertProcessedSql } from './processed-messages.js';

export type ClaimOutcome<P> =
  | { ok: true; applied: number; duplicates: number }
  /** The handler threw (or left the transaction aborted): counts against the record. */
  | { ok: false; kind: 'handler'; error: unknown; event: ConsumedEvent<P> | null }
  /** Connection lost, server shutting down, deadlock...: retried, not counted against the record. */
  | { ok: false; kind: 'transient'; error: unknown }
  /** The consumer's own statements failed for another reason (e.g. processed table missing). */
  | { ok: false; kind: 'database'; error: unknown };

/**
 * The exactly-once step: the processed-message claim and the handler's writes
 * share one PostgreSQL transaction, so either both happen or neither does.
 * Knows nothing of Kafka offsets or retries; it reports what went wrong and
 * leaves the decision to the caller.
 */
export class ClaimTransaction<P> {
  private readonly insertSql: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly groupId: string,
    readonly processedTable: string,
    private readonly handler: EventHandler<P>,
  ) {
    this.insertSql = insertProcessedSql(processedTable);
  }

  /**
   * One PostgreSQL transaction: insert every id into processed_messages (a
   * conflict = already applied), run the handler for each new one, COMMIT.
   */
  async apply(events: ConsumedEvent<P>[]): Promise<ClaimOutcome<P>> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      return { ok: false, kind: isTransientPgError(error) ? 'transient' : 'database', error };
    }
    let connectionError: unknown = null;
    const onError = (error: unknown): void => {
      connectionError = error;
    };
    client.on('error', onError);
    let current: ConsumedEvent<P> | null = null;
    let committing = false;
    let outcome: ClaimOutcome<P>;
    let destroy = false;
    try {
      await client.query('begin');
      const inserted = await client.query<{ message_id: string }>(this.insertSql, [this.groupId, events.map((e) => e.id)]);
      const fresh = new Set(inserted.rows.map((r) => r.message_id));
      let applied = 0;
      let duplicates = 0;
      for (const event of events) {
        // delete(): a second copy of the same id in this batch is a duplicate too.
        if (!fresh.delete(event.id)) {
          duplicates += 1;
          continue;
        }
        current = event;
        await inConsumerSpan(event, this.groupId, () => this.handler(client, event));
        current = null;
        applied += 1;
      }
      committing = true;
      const result = await client.query('commit');
      if (result.command !== 'COMMIT') {
        // PostgreSQL answers COMMIT of an aborted transaction with ROLLBACK: a statement failed
        // inside the handler and the handler swallowed the error. Nothing was applied.
        outcome = {
          ok: false,
          kind: 'handler',
          error: new OutboxTailError(
            'PG_ERROR',
            'a statement failed inside the handler and the handler caught the error; the transaction was aborted and rolled back',
          ),
          event: events.length === 1 ? events[0]! : null,
        };
      } else {
        outcome = { ok: true, applied, duplicates };
      }
    } catch (error) {
      const transient = connectionError !== null || isTransientPgError(error);
      if (committing) {
        destroy = true; // COMMIT failed: the outcome is unknown, the retry finds out (a committed id is a duplicate)
      } else {
        try {
          await client.query('rollback');
        } catch {
          destroy = true;
        }
      }
      if (transient) {
        destroy = true;
        outcome = { ok: false, kind: 'transient', error: connectionError ?? error };
      } else if (current !== null || committing) {
        // Thrown by the handler, or by COMMIT (a deferred constraint the handler's writes broke).
        outcome = { ok: false, kind: 'handler', error, event: current ?? (events.length === 1 ? events[0]! : null) };
      } else {
        outcome = { ok: false, kind: 'database', error };
      }
    } finally {
      client.off('error', onError);
    }
    client.release(destroy || connectionError !== null ? true : undefined);
    return outcome;
  }

  /**
   * Claims ids without running the handler (a dead-lettered record), so its
   * replays are skipped as duplicates. Autocommit: nothing else has to commit with it.
   */
  async claimOnly(ids: string[]): Promise<void> {
    await this.pool.query(this.insertSql, [this.groupId, ids]);
  }
}
