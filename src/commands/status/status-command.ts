import { EXIT } from '../../shared/outbox-tail-error.js';
import { allShards, shardName } from '../../shared/shard-spec.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { readSlotStatus, type SlotStatus } from '../../postgres/slots/slot-status.js';
import { toRunConfig } from '../../config/run-config.js';
import { defineCommand, JSON_OPTION, jsonLine } from '../command.js';

function statusLines(status: SlotStatus): string[] {
  return [
    `slot                 ${status.slot} ${status.exists ? `(${status.plugin})` : 'MISSING'}`,
    `active               ${status.active ? `yes, pid ${status.activePid}` : 'no'}`,
    `confirmed_flush_lsn  ${status.confirmedFlushLsn ?? '-'}`,
    `restart_lsn          ${status.restartLsn ?? '-'}`,
    `current_wal_lsn      ${status.currentWalLsn}${status.standby ? ' (replayed, on a hot standby)' : ''}`,
    ...(status.standby
      ? [`standby              decoding on a hot standby; replay lag ${status.standby.replayLagBytes ?? '-'} bytes (received, not yet replayed)`]
      : []),
    `lag_bytes            ${status.lagBytes ?? '-'}`,
    `retained_wal_bytes   ${status.retainedWalBytes ?? '-'}`,
    `wal_status           ${status.walStatus ?? '-'}`,
    ...(status.invalidation
      ? [`invalidated          cause ${status.invalidation.reason}: ${status.invalidation.cause}`, `fix                  ${status.invalidation.fix}`]
      : []),
    `failover             ${!status.exists ? '-' : (status.failover ?? '- (no failover slots before PostgreSQL 17)')}${status.synced ? ' (synced copy on a standby)' : ''}`,
    `publication          ${status.publication} ${status.publicationExists ? `(${status.publicationTables.join(', ') || 'no tables'})` : 'MISSING'}`,
    `outbox               ${status.outbox?.totalBytes == null ? 'MISSING' : `${status.outbox.table}: ~${status.outbox.rowsEstimate ?? '?'} rows, ${status.outbox.totalBytes} bytes, oldest ${status.outbox.oldestCreatedAt ?? '-'}`}`,
  ];
}

/** status --shards N: one line per shard. */
function shardLines(statuses: readonly SlotStatus[]): string[] {
  const head = `${'shard'.padEnd(6)} ${'slot'.padEnd(30)} ${'active'.padEnd(12)} ${'confirmed_flush_lsn'.padEnd(20)} ${'lag_bytes'.padStart(12)} wal_status`;
  const rows = statuses.map(
    (s, i) =>
      `${`${i}/${statuses.length}`.padEnd(6)} ${s.slot.padEnd(30)} ${(s.exists ? (s.active ? `pid ${s.activePid}` : 'no') : 'MISSING').padEnd(12)} ${(s.confirmedFlushLsn ?? '-').padEnd(20)} ${String(s.lagBytes ?? '-').padStart(12)} ${s.walStatus ?? '-'}` +
      (s.publicationExists ? '' : ` (publication ${s.publication} MISSING)`),
  );
  return [head, ...rows];
}

/** One slot's status, or (status --shards N without --shard) every shard's. */
type StatusResult = { kind: 'slot'; status: SlotStatus } | { kind: 'shards'; shards: SlotStatus[] };

export const statusCommand = defineCommand({
  names: ['status'],
  describe: 'slot and publication state, lag in bytes',
  options: { json: JSON_OPTION },
  config: toRunConfig,
  run: (config) =>
    withPgClient(config, async (client): Promise<StatusResult> => {
      const outbox = { table: config.table, createdAtColumn: config.columnCreatedAt };
      if (config.shards === undefined || config.shard !== undefined) {
        return { kind: 'slot', status: await readSlotStatus(client, config.slot, config.publication, outbox) };
      }
      const shards = [];
      for (const { index } of allShards(config.shards)) {
        shards.push(await readSlotStatus(client, shardName(config.slot, index), shardName(config.publication, index), outbox));
      }
      return { kind: 'shards', shards };
    }),
  format(result, args) {
    if (result.kind === 'shards') {
      return {
        stdout: args.json ? jsonLine({ shards: result.shards }) : `${shardLines(result.shards).join('\n')}\n`,
        exitCode: result.shards.every((s) => s.exists && s.publicationExists) ? EXIT.OK : EXIT.PREFLIGHT,
      };
    }
    return {
      stdout: args.json ? jsonLine(result.status) : `${statusLines(result.status).join('\n')}\n`,
      exitCode: result.status.exists ? EXIT.OK : EXIT.PREFLIGHT,
    };
  },
});
