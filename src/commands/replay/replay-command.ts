import { EXIT } from '../../shared/outbox-tail-error.js';
import { createLogger } from '../../shared/create-logger.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { MAX_TIMER_MS } from '../../shared/max-timer-ms.js';
import { defineCommand, JSON_OPTION, jsonLine, TIME_WINDOW_OPTIONS, wholeNumberOption } from '../command.js';
import { parseTimeWindow } from '../time-window.js';
import { replayOutbox, type ReplayReport } from './replay-outbox.js';

function replayLines(report: ReplayReport): string[] {
  const verb = report.dryRun ? 'would publish' : 'published';
  return [
    `window               [${report.from}, ${report.to}) by ${report.table}'s created-at column${report.onlyMissing ? ', rows missing from Kafka only' : ''}`,
    `order                ${report.order === 'commit_timestamp' ? 'commit time (track_commit_timestamp = on), then insert order' : 'created-at column, then insert order (track_commit_timestamp is off)'}`,
    `${verb.padEnd(20)} ${report.dryRun ? report.selected - report.malformed.length : report.published} of ${report.selected} row(s) in ${report.seconds} s`,
    ...Object.entries(report.topics).map(([topic, n]) => `  ${topic} ${n}`),
    ...report.malformed.map((m) => `not sent (malformed) ${m.id ?? '(no id)'}: ${m.reason}`),
  ];
}

export const replayCommand = defineCommand({
  names: ['replay'],
  describe: 'republish the outbox rows created in a window (duplicates possible, loss not); --only-missing sends what verify reports missing',
  options: {
    ...TIME_WINDOW_OPTIONS,
    'only-missing': { type: 'boolean', describe: 'only rows whose id is not in Kafka (as verify reports them)' },
    'dry-run': { type: 'boolean', describe: 'select and count, publish nothing' },
    'kafka-margin-ms': wholeNumberOption('kafka-margin-ms', {
      min: 0,
      max: MAX_TIMER_MS,
      default: 300_000,
      describe: 'with --only-missing: start reading Kafka this long before --from',
    }),
    'batch-size': wholeNumberOption('batch-size', { min: 1, max: 1_000_000, default: 1000, describe: 'rows fetched and published per Kafka request' }),
    json: JSON_OPTION,
  },
  config: (resolved) => resolved,
  async run(config, args, io) {
    const window = parseTimeWindow(args.from, args.to);
    // stdout carries the report: logs (warnings and up unless --log-level asks for more) go to stderr.
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
    const options = {
      window,
      onlyMissing: Boolean(args['only-missing']),
      dryRun: Boolean(args['dry-run']),
      marginMs: args['kafka-margin-ms'],
      batchSize: args['batch-size'],
    };
    const report = await withPgClient(config, (client) => replayOutbox(client, config, options, logger));
    if (report.selected === 0) io.warn(`no rows to replay in [${report.from}, ${report.to}) in ${report.table}`);
    return report;
  },
  format: (report, args) => ({
    stdout: args.json ? jsonLine(report) : `${replayLines(report).join('\n')}\n`,
    exitCode: report.malformed.length === 0 ? EXIT.OK : EXIT.BAD_INPUT,
  }),
});
