import { Lsn } from '../../src/shared/lsn.js';
import { decodePgoutput, type PgoutputMessage } from '../../src/pipeline/decode/pgoutput-decoder.js';
import { query } from './slot.js';

/**
 * A second logical slot on the test's database, created at the start of a
 * scenario and only ever peeked: what a consumer of the slot would be sent, at
 * which LSNs. Scenarios that need an exact WAL shape (a commit record starting
 * exactly at another transaction's end) prove it with this instead of assuming
 * it: other test files share the server, and their WAL (or the bgwriter's
 * running-xacts record every 15 s) can land in between.
 */
export interface DecodedTxn {
  /** XLogData LSN of the Begin: the LSN of the transaction's first published change. */
  beginLsn: Lsn;
  /** Start of the commit record (Begin's final LSN). */
  commitLsn: Lsn;
  endLsn: Lsn;
  /** XLogData LSN of the Commit (PostgreSQL sends the end LSN there). */
  commitMessageLsn: Lsn;
  aggregateIds: string[];
  /** Contents of the transactional logical decoding messages in it (with messages: true). */
  messages: string[];
}

/** The committed transactions a logical slot would send now, decoded, without consuming them. */
export async function peekTransactions(url: string, slot: string, options: { messages?: boolean } = {}): Promise<DecodedTxn[]> {
  const rows = await query<{ lsn: string; data: Buffer }>(
    url,
    `select lsn::text as lsn, data from pg_logical_slot_peek_binary_changes($1, null, null, 'proto_version', '1', 'publication_names', 'outbox_tail', 'messages', $2)`,
    [slot, options.messages ? 'true' : 'false'],
  );
  const txns: DecodedTxn[] = [];
  const columns = new Map<number, string[]>();
  let open: DecodedTxn | null = null;
  for (const row of rows) {
    const message: PgoutputMessage = decodePgoutput(row.data);
    const lsn = Lsn.parse(row.lsn);
    if (message.tag === 'begin')
      open = { beginLsn: lsn, commitLsn: message.finalLsn, endLsn: Lsn.of(0n), commitMessageLsn: Lsn.of(0n), aggregateIds: [], messages: [] };
    else if (message.tag === 'relation')
      columns.set(
        message.relationId,
        message.columns.map((c) => c.name),
      );
    else if (message.tag === 'insert' && open) {
      const at = columns.get(message.relationId)?.indexOf('aggregate_id') ?? -1;
      const value = at >= 0 ? message.values[at] : null;
      if (value) open.aggregateIds.push(value.toString());
    } else if (message.tag === 'message' && open && message.transactional) open.messages.push(message.content.toString());
    else if (message.tag === 'commit' && open) {
      open.endLsn = message.endLsn;
      open.commitMessageLsn = lsn;
      txns.push(open);
      open = null;
    }
  }
  return txns;
}

/** Waits until the slot has no walsender, so its confirmed_flush_lsn is final. */
export async function waitForInactive(url: string, slot: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await query<{ active: boolean }>(url, 'select active from pg_replication_slots where slot_name = $1', [slot]))[0]?.active) {
    if (Date.now() > deadline) throw new Error(`slot ${slot} still active ${timeoutMs} ms after the relay was killed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type ShapeAttempt<T> = { shapeMet: false; why: string; shape: Record<string, string> } | ({ shapeMet: true; shape: Record<string, string> } & T);

/**
 * Builds a WAL shape until it really occurred (at most `attempts` times) and
 * returns that run; fails, listing every miss, if it never did.
 */
export async function untilShapeOccurs<T>(
  label: string,
  run: () => Promise<ShapeAttempt<T>>,
  attempts = 5,
): Promise<Extract<ShapeAttempt<T>, { shapeMet: true }>> {
  const missed: string[] = [];
  for (let i = 1; i <= attempts; i++) {
    const attempt = await run();
    console.log(`[${label}] attempt ${i}: ${JSON.stringify(attempt, (_, v: unknown) => (typeof v === 'bigint' ? Lsn.format(Lsn.of(v)) : v))}`);
    if (attempt.shapeMet) return attempt as Extract<ShapeAttempt<T>, { shapeMet: true }>;
    missed.push(`${attempt.why} ${JSON.stringify(attempt.shape)}`);
  }
  throw new Error(`[${label}] the WAL shape did not occur in ${attempts} attempts:\n${missed.join('\n')}`);
}
