import { EXIT } from '../../shared/outbox-tail-error.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { MAX_TIMER_MS } from '../../shared/max-timer-ms.js';
import { defineCommand, JSON_OPTION, jsonLine, TIME_WINDOW_OPTIONS, wholeNumberOption } from '../command.js';
import { parseTimeWindow } from '../time-window.js';
import { verifyOutbox, type VerifyReport } from './verify-outbox.js';

function verifyLines(r: VerifyReport): string[] {
  const lines = [
    `window               [${r.from}, ${r.to}) by ${r.table}'s created-at column; Kafka read from ${r.kafkaFrom}`,
    `${'topic'.padEnd(40)} ${'rows'.padStart(10)} ${'records'.padStart(10)} ${'distinct'.padStart(10)} ${'missing'.padStart(10)} ${'unknown'.padStart(10)}`,
  ];
  for (const t of r.topics) {
    const name = t.exists ? t.topic : `${t.topic} (no such topic)`;
    lines.push(`${name.padEnd(40)} ${[t.rows, t.records, t.distinctIds, t.missing, t.unknown].map((n) => String(n).padStart(10)).join(' ')}`);
    if (t.missingIds.length > 0) lines.push(`  missing ids (first ${t.missingIds.length}): ${t.missingIds.join(' ')}`);
    if (t.unknownIds.length > 0) lines.push(`  ids no row has (first ${t.unknownIds.length}): ${t.unknownIds.join(' ')}`);
  }
  lines.push(`total                rows ${r.rows}, records ${r.records}, missing ${r.missing}, unknown ${r.unknown}; ${r.seconds} s`);
  if (r.recordsWithoutHeaders > 0) lines.push(`note                 ${r.recordsWithoutHeaders} record(s) without an id or created_at header were not compared`);
  return lines;
}

export const verifyCommand = defineCommand({
  names: ['verify'],
  describe: 'compare the outbox rows created in a window with the ids in Kafka; exit 1 when some are missing',
  options: {
    ...TIME_WINDOW_OPTIONS,
    'kafka-margin-ms': wholeNumberOption('kafka-margin-ms', {
      min: 0,
      max: MAX_TIMER_MS,
      default: 300_000,
      describe: 'start reading Kafka this long before --from (record timestamps come from the relay host clock)',
    }),
    list: wholeNumberOption('list', { min: 0, max: 100_000, default: 10, describe: 'missing and unknown ids listed per topic' }),
    json: JSON_OPTION,
  },
  config: (resolved) => resolved,
  async run(config, args, io) {
    const window = parseTimeWindow(args.from, args.to);
    const report = await withPgClient(config, (client) => verifyOutbox(client, config, { window, marginMs: args['kafka-margin-ms'], list: args.list }));
    if (report.rows === 0) io.warn(`no outbox rows created in [${report.from}, ${report.to}) in ${report.table}: check --from/--to and --table`);
    return report;
  },
  format: (report, args) => ({
    stdout: args.json ? jsonLine(report) : `${verifyLines(report).join('\n')}\n`,
    exitCode: report.missing === 0 ? EXIT.OK : EXIT.FATAL,
  }),
});
