import type pg from 'pg';
import type { Logger } from 'pino';
import { createSlot, dropSlot, readSlot } from '../../postgres/slots/slot-catalog.js';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { classifyPgError } from '../../postgres/pg-errors.js';
import { replayOutbox, type ReplayReport, type ReplaySettings } from '../replay/replay-outbox.js';

/** What recover uses: replay's settings, the slot to recreate, and --failover-slot. */
export interface RecoverSettings extends ReplaySettings {
  slot: string;
  failoverSlot: boolean;
}

export interface RecoverOptions {
  /** Backfill from this time instead of the recorded position. */
  sinceMs: number | null;
  /** How far before the recorded frontier commit time the backfill starts: the longest outbox transaction, at least. */
  marginMs: number;
  dryRun: boolean;
  batchSize: number;
}

export interface RecoverReport {
  slot: string;
  /** What was found: no slot, or an invalidated one (dropped to reuse its name). */
  found: 'missing' | 'invalidated';
  /** The recorded position the backfill starts from (null with --since). */
  position: { frontierCommitTime: string; frontierLsn: string; relay: string; updatedAt: string } | null;
  backfillFrom: string;
  /** The new slot's consistent point: every transaction committing after it streams from the slot. */
  slotLsn: string | null;
  replay: ReplayReport;
}

/** Rows may start long before they commit: created_at is the transaction's start, not its commit. */
const FAR_FUTURE_MS = 24 * 3_600_000;

/**
 * `outbox-tail recover`: after the slot was lost (dropped, or invalidated by
 * max_slot_wal_keep_size), creates it anew, then republishes from the table
 * every row created since the recorded position (the commit time of the
 * last transaction behind the ack frontier, outbox_tail_relay_position)
 * minus the margin. The replay's snapshot is taken after the new slot's
 * consistent point, so a row committed before that point is in the snapshot
 * and one committed after it streams from the slot: no gap between the two,
 * at the cost of duplicates, which consumers absorb by id.
 */
export async function recoverSlot(client: pg.Client, config: RecoverSettings, options: RecoverOptions, logger: Logger): Promise<RecoverReport> {
  const { slot } = config;
  // Every failure classified (SQLSTATE), naming the slot.
  const inSql = <T>(work: () => Promise<T>): Promise<T> =>
    work().catch((error: unknown) => Promise.reject(classifyPgError(error, `recovering slot ${slot}`, slot)));
  const state = await inSql(() => readSlot(client, slot));
  if (state && state.invalidation === null) {
    throw new OutboxTailError('SLOT_NOT_LOST', `recover: slot ${slot} exists and is not invalidated; there is nothing to recover`, {
      hint: 'start the relay: it resumes from the slot. recover is for a slot that was dropped or invalidated (wal_status = lost)',
      exitCode: EXIT.PREFLIGHT,
    });
  }
  if (state?.activePid != null) {
    throw new OutboxTailError('SLOT_ACTIVE', `recover: the invalidated slot ${slot} is held by PID ${state.activePid}`, {
      hint: 'stop the relay holding it (it exits with code 4 on an invalidated slot), then run recover again',
      exitCode: EXIT.PREFLIGHT,
    });
  }
  const position = await readPosition(client, slot);
  if (options.sinceMs === null && position === null) {
    throw new OutboxTailError('POSITION_UNKNOWN', `recover: no recorded position for slot ${slot} in outbox_tail_relay_position`, {
      hint: 'give --since <time>: a time when every earlier outbox row was in Kafka (e.g. outbox_tail_last_confirm_timestamp_seconds of the lost relay, minus its lag); rows since then are republished',
      exitCode: EXIT.CONFIG,
    });
  }
  const fromMs = options.sinceMs ?? Date.parse(position!.frontierCommitTime) - options.marginMs;
  let slotLsn: string | null = null;
  if (!options.dryRun) {
    await inSql(async () => {
      await dropSlot(client, slot);
      await createSlot(client, slot, { failover: config.failoverSlot });
      slotLsn = (await readSlot(client, slot))?.confirmedFlushLsn ?? null;
    });
    logger.warn({ event: 'slot-recreated', slot, lsn: slotLsn }, 'recover: slot created anew; backfilling from the table');
  }
  const replay = await replayOutbox(
    client,
    config,
    { window: { fromMs, toMs: Date.now() + FAR_FUTURE_MS }, onlyMissing: false, dryRun: options.dryRun, marginMs: 0, batchSize: options.batchSize },
    logger,
  );
  return { slot, found: state ? 'invalidated' : 'missing', position, backfillFrom: new Date(fromMs).toISOString(), slotLsn, replay };
}

async function readPosition(client: pg.Client, slot: string): Promise<RecoverReport['position']> {
  try {
    const { rows } = await client.query<{ t: string; lsn: string; relay: string; updated: string }>(
      `select to_char(frontier_commit_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t, frontier_lsn::text as lsn, relay,
              to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as updated
         from outbox_tail_relay_position where slot = $1`,
      [slot],
    );
    const r = rows[0];
    return r ? { frontierCommitTime: r.t, frontierLsn: r.lsn, relay: r.relay, updatedAt: r.updated } : null;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return null;
    throw classifyPgError(error, `reading outbox_tail_relay_position for ${slot}`, slot);
  }
}
