import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { hasPostgresScheme } from '../../shared/has-postgres-scheme.js';
import { createLogger } from '../../shared/create-logger.js';
import { toRunConfig } from '../../config/run-config.js';
import { defineCommand, jsonLine } from '../command.js';
import { parseDuration } from '../time-window.js';
import { formatDoctorReport, runDoctor } from './run-doctor.js';

export const doctorCommand = defineCommand({
  names: ['doctor'],
  describe:
    'check the database and Kafka for what stalls, bloats or loses a slot: a table of ok/warn/fail, each with its fix; exit 0 all ok, 1 a warning, 2 a failure (docs/doctor.md)',
  options: {
    'max-downtime': { type: 'string', default: '1h', describe: 'the longest relay outage the slot must survive (sizes max_slot_wal_keep_size)' },
    'wal-sample': { type: 'string', default: '2s', describe: 'how long pg_current_wal_lsn() is sampled for the WAL rate' },
    'recovery-window': { type: 'string', default: '7d', describe: 'how long Kafka must keep records (topic retention.ms)' },
    'prune-older-than': { type: 'string', describe: "prune's --older-than, to check the outbox's oldest row against" },
    partitions: { type: 'number', describe: 'the partition count every outbox topic must have' },
    'standby-url': { type: 'string', describe: 'a standby to check for failover slots (sync_replication_slots) [env: OUTBOX_TAIL_STANDBY_URL]' },
    json: { type: 'boolean', describe: 'print one JSON object (its shape: docs/doctor.md)' },
  },
  config: toRunConfig,
  run(config, args, io) {
    const partitions = args.partitions;
    if (partitions !== undefined && (!Number.isInteger(partitions) || partitions < 1)) {
      throw new OutboxTailError('CONFIG_INVALID', 'invalid configuration:\n  --partitions: expected a whole number >= 1', {
        hint: 'e.g. --partitions 6',
        exitCode: EXIT.CONFIG,
      });
    }
    const standbyUrl = args['standby-url'] ?? io.env.OUTBOX_TAIL_STANDBY_URL ?? null;
    if (standbyUrl !== null && !hasPostgresScheme(standbyUrl)) {
      throw new OutboxTailError(
        'CONFIG_INVALID',
        `invalid configuration:\n  --standby-url / OUTBOX_TAIL_STANDBY_URL: must be a postgres:// or postgresql:// URL (given by ${args['standby-url'] !== undefined ? 'flag --standby-url' : 'env OUTBOX_TAIL_STANDBY_URL'}; the value is not shown: it may hold a password)`,
        { hint: 'e.g. --standby-url postgres://user@standby:5432/db, the password in OUTBOX_TAIL_STANDBY_URL or a pg password file', exitCode: EXIT.CONFIG },
      );
    }
    const options = {
      maxDowntimeMs: parseDuration('max-downtime', args['max-downtime']),
      walSampleMs: parseDuration('wal-sample', args['wal-sample']),
      recoveryWindowMs: parseDuration('recovery-window', args['recovery-window']),
      pruneOlderThanMs: args['prune-older-than'] === undefined ? null : parseDuration('prune-older-than', args['prune-older-than']),
      partitions: partitions ?? null,
      standbyUrl,
    };
    return runDoctor(config, options, createLogger('silent'));
  },
  format: (report, args) => ({ stdout: args.json ? jsonLine(report) : formatDoctorReport(report), exitCode: report.exitCode }),
});
