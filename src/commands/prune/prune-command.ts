import { EXIT } from '../../shared/outbox-tail-error.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { toRunConfig } from '../../config/run-config.js';
import { defineCommand, JSON_OPTION, jsonLine, wholeNumberOption } from '../command.js';
import { parseDuration } from '../time-window.js';
import { pruneOutbox } from './prune-outbox.js';

export const pruneCommand = defineCommand({
  names: ['prune'],
  describe: 'delete outbox rows older than a retention window, in small batches, keeping rows the slot may not have passed',
  options: {
    'older-than': { type: 'string', demandOption: true, describe: 'retention window: rows created longer ago are deleted (7d, 12h, 90m)' },
    'batch-size': wholeNumberOption('batch-size', { min: 1, max: 1_000_000, default: 5000, describe: 'rows deleted per transaction' }),
    'dry-run': { type: 'boolean', describe: 'count, delete nothing' },
    json: JSON_OPTION,
  },
  config: toRunConfig,
  run(config, args) {
    const olderThanMs = parseDuration('older-than', args['older-than']);
    const options = { slot: config.slot, olderThanMs, batchSize: args['batch-size'], dryRun: Boolean(args['dry-run']) };
    return withPgClient(config, (client) => pruneOutbox(client, config, options));
  },
  format(report, args) {
    if (args.json) return { stdout: jsonLine(report), exitCode: EXIT.OK };
    const verb = report.dryRun ? 'would delete' : 'deleted';
    const stdout =
      `${verb} ${report.deleted} row(s) of ${report.table} created before ${report.cutoff}${report.dryRun ? '' : ` in ${report.batches} batch(es)`}, ${report.seconds} s\n` +
      (report.heldBack > 0 ? `kept ${report.heldBack} older row(s): slot ${report.slot} may not have passed their transactions yet\n` : '');
    return { stdout, exitCode: EXIT.OK };
  },
});
