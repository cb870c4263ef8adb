import { EXIT } from '../../shared/outbox-tail-error.js';
import { createLogger } from '../../shared/create-logger.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { toRunConfig } from '../../config/run-config.js';
import { defineCommand, JSON_OPTION, jsonLine, wholeNumberOption } from '../command.js';
import { parseDuration, parseTime } from '../time-window.js';
import { recoverSlot, type RecoverReport } from './recover-slot.js';

function recoverLines(report: RecoverReport): string[] {
  const r = report.replay;
  return [
    `slot                 ${report.slot} was ${report.found}${report.slotLsn ? `; created anew at ${report.slotLsn}` : ' (dry run: left as it is)'}`,
    `position             ${report.position ? `frontier commit time ${report.position.frontierCommitTime} (recorded ${report.position.updatedAt} by ${report.position.relay})` : 'not used (--since)'}`,
    `backfill             rows created since ${report.backfillFrom}: ${r.dryRun ? 'would publish' : 'published'} ${r.dryRun ? r.selected - r.malformed.length : r.published} of ${r.selected} in ${r.seconds} s`,
    ...r.malformed.map((m) => `not sent (malformed) ${m.id ?? '(no id)'}: ${m.reason}`),
    r.dryRun ? 'next                 run again without --dry-run' : `next                 start the relay on ${report.slot}`,
  ];
}

export const recoverCommand = defineCommand({
  names: ['recover'],
  describe: 'after the slot was lost: create it anew and republish from the table every row since the recorded position',
  options: {
    since: { type: 'string', describe: 'backfill rows created since this time instead of the recorded position (a time with a zone, or 2h)' },
    margin: {
      type: 'string',
      describe: 'start this long before the recorded frontier commit time (1h, 30m): overrides --recover-margin-ms',
      deprecated: 'use --recover-margin-ms',
    },
    'dry-run': { type: 'boolean', describe: 'report what would be republished; leave the slot as it is' },
    'batch-size': wholeNumberOption('batch-size', { min: 1, max: 1_000_000, default: 1000, describe: 'rows fetched and published per Kafka request' }),
    json: JSON_OPTION,
  },
  config: toRunConfig,
  run(config, args, io) {
    if (args.margin !== undefined) io.warn('--margin is deprecated: use --recover-margin-ms (milliseconds)');
    const options = {
      sinceMs: args.since === undefined ? null : parseTime('since', args.since),
      // --margin (a duration, deprecated) still wins over --recover-margin-ms when given.
      marginMs: args.margin === undefined ? config.recoverMarginMs : parseDuration('margin', args.margin),
      dryRun: Boolean(args['dry-run']),
      batchSize: args['batch-size'],
    };
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
    return withPgClient(config, (client) => recoverSlot(client, config, options, logger));
  },
  format: (report, args) => ({
    stdout: args.json ? jsonLine(report) : `${recoverLines(report).join('\n')}\n`,
    exitCode: report.replay.malformed.length === 0 ? EXIT.OK : EXIT.BAD_INPUT,
  }),
});
