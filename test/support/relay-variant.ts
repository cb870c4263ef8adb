/**
 * Runs the real daemon (runDaemon) with a broken variant, for negative
 * controls: `tsx test/support/relay-variant.ts <variant>`, configured through
 * OUTBOX_TAIL_* env vars exactly like bin/outbox-tail.js. A variant is a
 * checkpointer (broken-checkpointers.ts), a restart filter (broken-resume-filter.ts), an
 * exactly-once part (broken-exactly-once.ts), a message mapping (broken-message-mapper.ts), a
 * slot recovery (broken-recovery.ts), a pipelined produce chain (broken-pipeline.ts), password
 * handling (broken-credentials.ts) or a regression-zoo bug (broken-zoo.ts).
 */
import { resolveConfig } from '../../src/config/resolve-config.js';
import { toRunConfig } from '../../src/config/run-config.js';
import { runDaemon } from '../../src/commands/run/run-daemon.js';
import { VARIANTS } from './broken-checkpointers.js';
import { installResumeFilter } from './broken-resume-filter.js';
import { EXACTLY_ONCE_VARIANTS } from './broken-exactly-once.js';
import { MESSAGE_VARIANTS } from './broken-message-mapper.js';
import { RECOVERY_VARIANTS } from './broken-recovery.js';
import { PIPELINE_VARIANTS } from './broken-pipeline.js';
import { ZOO_VARIANTS, zooExtras } from './broken-zoo.js';
import { installValueEncoderVariant, VALUE_ENCODER_VARIANTS } from './broken-value-encoder.js';
import { CREDENTIAL_VARIANTS } from './broken-credentials.js';

const variant = process.argv[2] ?? '';
const resolved = toRunConfig(resolveConfig({ env: process.env }));
const config = CREDENTIAL_VARIANTS[variant]?.(resolved) ?? resolved;
const base = variant in VARIANTS ? VARIANTS[variant as keyof typeof VARIANTS] : undefined;
const extras =
  (await zooExtras(variant, base, { databaseUrl: config.databaseUrl!, slot: config.slot })) ??
  (base
    ? { checkpointerFactory: base }
    : (EXACTLY_ONCE_VARIANTS[variant] ??
      MESSAGE_VARIANTS[variant] ??
      RECOVERY_VARIANTS[variant] ??
      PIPELINE_VARIANTS[variant] ??
      VALUE_ENCODER_VARIANTS[variant] ??
      (variant in CREDENTIAL_VARIANTS ? {} : undefined)));
if (!extras) {
  process.stderr.write(
    `unknown variant ${variant}; use one of ${[...Object.keys(VARIANTS), ...Object.keys(EXACTLY_ONCE_VARIANTS), ...Object.keys(MESSAGE_VARIANTS), ...Object.keys(RECOVERY_VARIANTS), ...Object.keys(PIPELINE_VARIANTS), ...Object.keys(VALUE_ENCODER_VARIANTS), ...Object.keys(CREDENTIAL_VARIANTS), ...ZOO_VARIANTS].join(', ')}\n`,
  );
  process.exit(2);
}
if (variant === 'skip-begin-at-resume-lsn') {
  await installResumeFilter(config.databaseUrl!, config.slot, (line) => process.stderr.write(`relay-variant: ${line}\n`));
}
installValueEncoderVariant(variant);
runDaemon(config, extras).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`relay-variant: ${error?.stack ?? error}\n`);
    process.exit(error?.exitCode ?? 1);
  },
);
