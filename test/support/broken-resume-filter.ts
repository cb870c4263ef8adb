/**
 * A deliberately broken restart filter, in test code only: the Debezium
 * WalPositionLocator class of bug (DBZ-5915, DBZ-6204, debezium/dbz#76). On
 * start the process reads the slot's confirmed_flush_lsn as "the last position
 * already processed" and drops every replayed transaction whose Begin arrives
 * at or below it, comparing the Begin's XLogData LSN (the LSN of the
 * transaction's first published change) instead of its commit LSN.
 *
 * It is wrong exactly when a transaction's first record starts at the confirmed
 * LSN (the previous commit's end LSN), or before it (a transaction that was open
 * across the confirm). The correct relay filters nothing: PostgreSQL already
 * skips every transaction whose commit record starts before confirmed_flush_lsn.
 */
import { LogicalReplicationService } from 'pg-logical-replication';
import pg from 'pg';
import { Lsn } from '../../src/shared/lsn.js';

export async function installResumeFilter(databaseUrl: string, slot: string, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let resume: Lsn;
  try {
    const row = (await client.query<{ lsn: string | null }>('select confirmed_flush_lsn::text as lsn from pg_replication_slots where slot_name = $1', [slot]))
      .rows[0];
    resume = row?.lsn ? Lsn.parse(row.lsn) : Lsn.of(0n);
  } finally {
    await client.end();
  }
  log(`resume filter: dropping replayed transactions whose Begin LSN <= ${Lsn.format(resume)}`);
  const emit = LogicalReplicationService.prototype.emit;
  let skipping = false;
  LogicalReplicationService.prototype.emit = function (this: LogicalReplicationService, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') {
      const [lsn, message] = args as [string, { tag?: string }];
      if (!skipping && message?.tag === 'begin' && Lsn.parse(lsn) <= resume) {
        skipping = true;
        log(`resume filter: dropped a transaction whose Begin LSN is ${lsn}`);
      }
      // Relation and Type messages are schema, not events: a filter keeps them
      // (pgoutput sends the outbox table's Relation inside the first transaction).
      if (skipping && message?.tag !== 'relation' && message?.tag !== 'type') {
        if (message?.tag === 'commit') skipping = false;
        return true;
      }
    }
    return emit.call(this, event, ...args);
  } as typeof emit;
}
