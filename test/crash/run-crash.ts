/**
 * `npm run crash -- [--orders 500] [--kills 5] [--consumer-kills 3] [--seed N] [--delivery exactly-once] [--source messages] [--json]`
 * Runs the crash test on the local stack (or OUTBOX_TAIL_STACK=external servers).
 * Without --json: a line per kill and the final table. With --json the last
 * line of stdout is one JSON object. Exit 0 iff the recount holds.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { startStack } from '../../dev/stack/index.js';
import { formatResult, runCrash } from './crash-harness.js';

const argv = await yargs(hideBin(process.argv))
  .option('orders', { type: 'number', default: 500 })
  .option('kills', { type: 'number', default: 5 })
  .option('consumer-kills', { type: 'number', default: 3 })
  .option('seed', { type: 'number', default: Date.now() % 100000 })
  .option('json', { type: 'boolean', default: false })
  .option('delivery', { choices: ['at-least-once', 'exactly-once'] as const, default: 'at-least-once' as const })
  // messages: the order app writes its events with outbox_tail.emit() and writeOutboxEvent via message; the relay runs --source messages.
  .option('source', { choices: ['table', 'messages'] as const, default: 'table' as const })
  .strict()
  .parseAsync();

const human = (line: string) => (argv.json ? process.stderr : process.stdout).write(`${line}\n`);
human(
  `crash test (${argv.delivery}, source ${argv.source}): ${argv.orders} orders, ${argv.kills} relay kills, ${argv['consumer-kills']} consumer kills, seed ${argv.seed}`,
);
const stack = await startStack({ log: (l) => process.stderr.write(`  ${l}\n`) });
let code = 1;
try {
  human(`stack: ${stack.provider} postgres=${stack.versions.postgres} kafka=${stack.versions.kafka}`);
  const result = await runCrash({
    stack,
    orders: argv.orders,
    kills: argv.kills,
    consumerKills: argv['consumer-kills'],
    seed: argv.seed,
    delivery: argv.delivery,
    source: argv.source,
    log: human,
  });
  human(formatResult(result));
  if (argv.json) process.stdout.write(`${JSON.stringify({ ...result, seed: argv.seed })}\n`);
  code = result.passed ? 0 : 1;
} finally {
  await stack.stop();
}
process.exit(code);
