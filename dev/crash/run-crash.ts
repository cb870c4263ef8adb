/**
 * `npm run crash -- [--orders 500] [--kills 5] [--consumer-kills 3] [--seed N] [--delivery exactly-once] [--source messages] [--shards N] [--relay-node 24,/usr/bin/node] [--json]`
 * Runs the crash test on the local stack (or OUTBOX_TAIL_STACK=external servers).
 * Without --json: a line per kill and the final table. With --json the last
 * line of stdout is one JSON object. Exit 0 iff the recount holds.
 * --relay-node runs the whole test once per node binary (a pinned major or a
 * path), relay and consumer on it, one after the other on the same stack; the
 * JSON object then has one result per node under `runs`.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { startStack } from '../stack/index.js';
import { formatResult, runCrash, type CrashResult } from '../../test/crash/crash-harness.js';
import { resolveNodeBinary } from '../support/node-binary.js';

const argv = await yargs(hideBin(process.argv))
  .option('orders', { type: 'number', default: 500 })
  .option('kills', { type: 'number', default: 5 })
  .option('consumer-kills', { type: 'number', default: 3 })
  .option('seed', { type: 'number', default: Date.now() % 100000 })
  .option('json', { type: 'boolean', default: false })
  .option('delivery', { choices: ['at-least-once', 'exactly-once'] as const, default: 'at-least-once' as const })
  // messages: the order app writes its events with outbox_tail.emit() and writeOutboxEvent via message; the relay runs --source messages.
  .option('source', { choices: ['table', 'messages'] as const, default: 'table' as const })
  // N > 0: a sharded outbox, one relay per shard (--shard i/N), the kills going round the shards (docs/sharding.md).
  .option('shards', { type: 'number', default: 0 })
  .option('relay-node', { type: 'string', describe: 'node binaries for the relay and the consumer, comma separated: pinned majors (24, 22) or paths' })
  .strict()
  .parseAsync();

const human = (line: string) => (argv.json ? process.stderr : process.stdout).write(`${line}\n`);
human(
  `crash test (${argv.delivery}, source ${argv.source}${argv.shards > 0 ? `, ${argv.shards} shards` : ''}): ${argv.orders} orders, ${argv.kills} relay kills, ${argv['consumer-kills']} consumer kills, seed ${argv.seed}`,
);
const stack = await startStack({ log: (l) => process.stderr.write(`  ${l}\n`) });
let code: number;
try {
  human(`stack: ${stack.provider} postgres=${stack.versions.postgres} kafka=${stack.versions.kafka}`);
  const nodes = argv['relay-node']?.split(',').filter(Boolean).map(resolveNodeBinary) ?? [undefined];
  const results: CrashResult[] = [];
  for (const node of nodes) {
    const result = await runCrash({
      stack,
      orders: argv.orders,
      kills: argv.kills,
      consumerKills: argv['consumer-kills'],
      seed: argv.seed,
      delivery: argv.delivery,
      source: argv.source,
      ...(argv.shards > 0 ? { shards: argv.shards } : {}),
      log: human,
      ...(node ? { node } : {}),
    });
    human(formatResult(result));
    results.push(result);
  }
  if (argv.json) process.stdout.write(`${JSON.stringify(results.length === 1 ? { ...results[0], seed: argv.seed } : { runs: results, seed: argv.seed })}\n`);
  code = results.every((r) => r.passed) ? 0 : 1;
} finally {
  await stack.stop();
}
process.exit(code);
