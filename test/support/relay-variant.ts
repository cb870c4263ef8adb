/**
 * Runs the real daemon (runDaemon) with a checkpointer variant, for negative
 * controls: `tsx test/support/relay-variant.ts <variant>`, configured through
 * OUTBOX_TAIL_* env vars exactly like bin/outbox-tail.js.
 */
import { resolveConfig } from '../../src/config/resolve-config.js';
import { toRunConfig } from '../../src/config/run-config.js';
import { runDaemon } from '../../src/cli/run-daemon.js';
import { VARIANTS, type RelayVariant } from './broken-checkpointers.js';
import { installResumeFilter } from './broken-resume-filter.js';

const variant = process.argv[2] as RelayVariant;
if (!(variant in VARIANTS)) {
  process.stderr.write(`unknown variant ${variant}; use one of ${Object.keys(VARIANTS).join(', ')}\n`);
  process.exit(2);
}
const config = toRunConfig(resolveConfig({ env: process.env }));
if (variant === 'skip-begin-at-resume-lsn') {
  await installResumeFilter(config.databaseUrl!, config.slot, (line) => process.stderr.write(`relay-variant: ${line}\n`));
}
runDaemon(config, { checkpointerFactory: VARIANTS[variant] }).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`relay-variant: ${error?.stack ?? error}\n`);
    process.exit(error?.exitCode ?? 1);
  },
);
