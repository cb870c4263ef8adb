/**
 * `npm run faults -- [--only NAME[,NAME]] [--json] [--soak MINUTES] [--seed N] [--variant BROKEN] [--delivery exactly-once] [--source messages]`
 * Runs the fault scenarios (issue 7) on a local stack of their own, one after
 * the other; or, with --soak, injects random faults for MINUTES and checks the
 * invariants at the end. Human lines go to stdout (stderr with --json); with
 * --json the last line of stdout is one JSON object:
 *   { "scenarios": [ { "name", "passed", "lost", "duplicates", "phantoms", "recovery_seconds", "detail", ... } ], "passed" }
 * Exit code 0 iff every scenario passed. --source messages: the table-less
 * outbox (events written as logical decoding messages, relays on --source
 * messages), the scenarios of MESSAGE_SCENARIOS.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { startFaultStack } from './fault-stack.js';
import type { FaultVariant, ScenarioResult } from './harness.js';
import { MESSAGE_SCENARIOS, SCENARIOS, scenario } from './scenarios.js';
import { runSoak } from './soak.js';

const argv = await yargs(hideBin(process.argv))
  .option('only', { type: 'string', array: true, describe: `scenario name(s): ${SCENARIOS.map((s) => s.name).join(', ')}` })
  .option('json', { type: 'boolean', default: false })
  .option('soak', { type: 'number', describe: 'minutes of random faults instead of the scenarios' })
  .option('seed', { type: 'number', default: Date.now() % 100000 })
  .option('variant', {
    type: 'string',
    choices: ['confirm-on-receipt', 'confirm-end-plus-one', 'no-keepalive-confirm', 'recover-without-backfill'],
    describe: 'negative control: run the scenarios against a deliberately broken relay (they should fail)',
  })
  .option('delivery', {
    type: 'string',
    choices: ['at-least-once', 'exactly-once'],
    describe: 'run the relays with --delivery exactly-once (the recount then reads committed only and allows no duplicate)',
  })
  .option('source', {
    type: 'string',
    choices: ['table', 'messages'],
    describe: `messages: events written as logical decoding messages, relays on --source messages (${MESSAGE_SCENARIOS.join(', ')})`,
  })
  .strict()
  .parseAsync();

const human = (line: string) => (argv.json ? process.stderr : process.stdout).write(`${line}\n`);
const only = (argv.only ?? []).flatMap((s) => s.split(',')).filter(Boolean);
const messages = argv.source === 'messages';
const selected = only.length > 0 ? only.map(scenario) : messages ? MESSAGE_SCENARIOS.map(scenario) : SCENARIOS;
if (messages && argv.soak !== undefined) throw new Error('--soak runs on the outbox table only');
for (const s of selected)
  if (messages && !MESSAGE_SCENARIOS.includes(s.name)) throw new Error(`${s.name} does not run with --source messages; one of ${MESSAGE_SCENARIOS.join(', ')}`);

const t0 = Date.now();
const fs = await startFaultStack({ log: (l) => human(`  ${l}`) });
human(
  `fault stack: postgres ${fs.stack.versions.postgres}, kafka ${fs.stack.versions.kafka}; relay paths via proxies pg ${fs.pgProxy.address}, kafka ${fs.kafkaProxy.address}`,
);
const results: ScenarioResult[] = [];
let extra: Record<string, unknown> = {};
try {
  if (argv.soak !== undefined) {
    human(`soak: ${argv.soak} minutes of random faults, seed ${argv.seed}`);
    const soak = await runSoak({ fs, minutes: argv.soak, seed: argv.seed, log: human });
    results.push(soak.result);
    extra = { soak: soak.summary };
  } else {
    for (const s of selected) {
      human(`\n=== ${s.name}: ${s.title}`);
      const result = await s.run({
        fs,
        log: human,
        ...(argv.variant ? { variant: argv.variant as FaultVariant } : {}),
        ...(argv.delivery ? { delivery: argv.delivery as 'at-least-once' | 'exactly-once' } : {}),
        ...(messages ? { source: 'messages' as const } : {}),
      });
      results.push(result);
      human(
        `--- ${s.name}: ${result.passed ? 'PASS' : 'FAIL'} in ${result.seconds} s: lost ${result.lost}, duplicates ${result.duplicates}, phantoms ${result.phantoms}, recovery ${result.recovery_seconds} s\n    ${result.detail}`,
      );
    }
  }
} finally {
  await fs.stop();
}
const passed = results.length > 0 && results.every((r) => r.passed);
human(
  `\n${results.map((r) => `  ${r.passed ? 'PASS' : 'FAIL'}  ${r.name.padEnd(18)} ${String(r.seconds).padStart(6)} s  lost ${r.lost}  duplicates ${r.duplicates}  phantoms ${r.phantoms}  recovery ${r.recovery_seconds} s`).join('\n')}`,
);
human(`faults: ${passed ? 'PASS' : 'FAIL'} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
if (argv.json) {
  const scenarios = results.map(({ name, passed: p, lost, duplicates, phantoms, recovery_seconds, detail, ...rest }) => ({
    name,
    passed: p,
    lost,
    duplicates,
    phantoms,
    recovery_seconds,
    detail,
    ...rest,
  }));
  process.stdout.write(`${JSON.stringify({ scenarios, passed, source: argv.source ?? 'table', seconds: Math.round((Date.now() - t0) / 1000), ...extra })}\n`);
}
process.exit(passed ? 0 : 1);
