import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { initOutbox, type InitResult } from '../commands/init/init.js';
import { initOffsetsTopic } from '../commands/init/init-offsets-topic.js';
import { packageVersion } from '../shared/package-version.js';
import { createLogger } from '../shared/create-logger.js';
import { readSlotStatus } from '../postgres/slot-status.js';
import type { RelayConfig } from '../config/relay-config.js';
import {
  DEPRECATED_OPTIONS,
  deprecatedKeys,
  envName,
  flagName,
  keysByGroup,
  OPTIONS,
  optionKeys,
  type DeprecatedKey,
  type OptionKey,
} from '../config/options.js';
import { resolveConfig } from '../config/resolve-config.js';
import { toRunConfig } from '../config/run-config.js';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { withPgClient } from '../postgres/with-pg-client.js';
import { parseDuration, parseTime, parseTimeWindow } from '../commands/time-window.js';
import { pruneOutbox } from '../commands/prune/prune-outbox.js';
import { recoverSlot } from '../commands/recover/recover-slot.js';
import { replayOutbox } from '../commands/replay/replay-outbox.js';
import { verifyOutbox, type VerifyReport } from '../commands/verify/verify-outbox.js';
import { COMMANDS, CONFIG_FILE_OPTION, type CommandSpec } from './command-options.js';
import { runDaemon } from '../commands/run/run-daemon.js';
import { initShardedOutbox, type ShardInitResult } from '../commands/init/init-shards.js';
import { allShards, MAX_SHARDS, shardName } from '../shared/shard-spec.js';
import { reshard, type ReshardStep } from '../commands/reshard/reshard.js';
import { formatDoctorReport, runDoctor } from '../commands/doctor/run-doctor.js';

/** Declares every config option on a command, by group; no yargs defaults, so precedence stays in resolveConfig. */
function withConfigOptions<T>(y: Argv<T>): Argv<T> {
  let out: Argv<T> = y.option(CONFIG_FILE_OPTION.flag, {
    ...CONFIG_FILE_OPTION.options,
    describe: `${CONFIG_FILE_OPTION.options.describe} [env: ${CONFIG_FILE_OPTION.env}]`,
  }) as Argv<T>;
  for (const [group, keys] of keysByGroup(OPTIONS)) {
    for (const key of keys) {
      const spec = OPTIONS[key];
      const envs = [envName(key), ...(spec.aliasesEnv ?? [])].join(', ');
      const def = spec.default === undefined ? '' : ` [default: ${Array.isArray(spec.default) ? spec.default.join(',') : String(spec.default)}]`;
      const range = spec.max === undefined ? '' : ` [range: ${spec.min ?? ''}-${spec.max}]`;
      out = out.option(flagName(key), {
        // Comma lists stay strings: the schema splits them, whichever source they come from.
        type: spec.type === 'array' ? 'string' : spec.type,
        describe: `${spec.describe}${def}${range} [env: ${envs}]`,
        group: `${group}:`,
        ...(spec.choices && spec.type !== 'array' ? { choices: spec.choices } : {}),
      }) as Argv<T>;
    }
  }
  for (const key of deprecatedKeys) {
    const { spec, replacement } = DEPRECATED_OPTIONS[key];
    out = out.option(flagName(key), {
      type: spec.type,
      describe: `${spec.describe} [env: ${envName(key)}]`,
      group: `${spec.group}:`,
      deprecated: `use --${flagName(replacement)}`,
    }) as Argv<T>;
  }
  return out;
}

/** A command as COMMANDS (command-options.ts) declares it: the config options plus its own. */
function command<T>(y: Argv<T>, name: keyof typeof COMMANDS, run: (argv: Record<string, unknown>) => Promise<void>): Argv<T> {
  const spec: CommandSpec = COMMANDS[name];
  return y.command([...spec.names], spec.describe, (c) => withConfigOptions(c).options(spec.options), run) as Argv<T>;
}

const numberKeys: ReadonlyArray<OptionKey | DeprecatedKey> = [
  ...optionKeys.filter((key) => OPTIONS[key].type === 'number'),
  ...deprecatedKeys.filter((key) => DEPRECATED_OPTIONS[key].spec.type === 'number'),
];

function loadConfig(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): RelayConfig {
  // yargs turns a number option that is not a number into NaN: name the flag here, before the value is lost.
  const notNumbers = numberKeys.filter((key) => Number.isNaN(argv[key]));
  if (notNumbers.length > 0) {
    throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n${notNumbers.map((key) => `  --${flagName(key)}: expected a number`).join('\n')}`, {
      hint: 'see `outbox-tail --help`',
      exitCode: EXIT.CONFIG,
    });
  }
  const configFile = (argv.config as string | undefined) ?? env.OUTBOX_TAIL_CONFIG;
  return resolveConfig({ flags: argv, env, ...(configFile ? { configFile } : {}) });
}

function warnSecretsOnCommandLine(argv: string[]): void {
  if (argv.some((a) => /^--database-url(=|$)/.test(a)) && argv.join(' ').match(/:\/\/[^/\s]*:[^@\s]+@/)) {
    process.stderr.write(
      'outbox-tail: warning: a password in --database-url is visible in `ps`; use --database-url-file, OUTBOX_TAIL_DATABASE_URL or a config file\n',
    );
  }
  if (argv.some((a) => /^--sasl-password(=|$)/.test(a))) {
    process.stderr.write('outbox-tail: warning: --sasl-password is visible in `ps`; use --sasl-password-file, OUTBOX_TAIL_SASL_PASSWORD or a config file\n');
  }
}

async function runCommand(argv: Record<string, unknown>): Promise<number> {
  return runDaemon(toRunConfig(loadConfig(argv, process.env)));
}

function initReport({ migrations, publication, slot }: InitResult): string[] {
  return [
    `migrations: applied ${migrations.applied.join(', ') || 'none'}; already applied ${migrations.skipped.length}`,
    publication.created ? `publication ${publication.name} created for ${publication.table}` : `publication ${publication.name} exists`,
    ...(slot
      ? [
          slot.created
            ? `slot ${slot.name} created (pgoutput${slot.failover ? ', failover = true' : ''})`
            : `slot ${slot.name} exists${slot.failover === null ? '' : ` (failover = ${slot.failover})`}`,
        ]
      : []),
  ];
}

function shardInitReport({ migrations, shards, messagePrefixes }: ShardInitResult): string[] {
  return [
    `migrations: applied ${migrations.applied.join(', ') || 'none'}; already applied ${migrations.skipped.length}`,
    ...shards.map(
      (s) =>
        `shard ${s.index}/${shards.length}: publication ${s.publication.name} ${s.publication.created ? 'created' : 'exists'}` +
        (s.slot ? `, slot ${s.slot.name} ${s.slot.created ? 'created' : 'exists'}` : ''),
    ),
    ...(messagePrefixes ? [`outbox_tail.emit writes to message prefixes ${messagePrefixes.join(', ')}`] : []),
  ];
}

async function initCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  const { shards } = config;
  let lines: string[];
  let warnings: string[] = [];
  if (shards === undefined) {
    const result = await withPgClient(config, (client) => initOutbox(client, config));
    lines = initReport(result);
    warnings = result.warnings;
  } else {
    const result = await withPgClient(config, (client) => initShardedOutbox(client, { ...config, shards }));
    lines = shardInitReport(result);
  }
  if (config.delivery === 'exactly-once') {
    const offsets = await initOffsetsTopic(config, createLogger('silent'));
    lines.push(offsets.created ? `offsets topic ${offsets.topic} created (cleanup.policy=compact)` : `offsets topic ${offsets.topic} exists and is compacted`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const warning of warnings) process.stderr.write(`outbox-tail: warning: ${warning}\n`);
  return EXIT.OK;
}

/** status --shards N: one line per shard. */
async function shardsStatusCommand(argv: Record<string, unknown>, config: ReturnType<typeof toRunConfig>, shards: number): Promise<number> {
  const statuses = await withPgClient(config, async (client) => {
    const out = [];
    for (const { index } of allShards(shards)) {
      out.push(
        await readSlotStatus(client, shardName(config.slot, index), shardName(config.publication, index), {
          table: config.table,
          createdAtColumn: config.columnCreatedAt,
        }),
      );
    }
    return out;
  });
  if (argv.json) {
    process.stdout.write(`${JSON.stringify({ shards: statuses })}\n`);
  } else {
    const head = `${'shard'.padEnd(6)} ${'slot'.padEnd(30)} ${'active'.padEnd(12)} ${'confirmed_flush_lsn'.padEnd(20)} ${'lag_bytes'.padStart(12)} wal_status`;
    const rows = statuses.map(
      (s, i) =>
        `${`${i}/${shards}`.padEnd(6)} ${s.slot.padEnd(30)} ${(s.exists ? (s.active ? `pid ${s.activePid}` : 'no') : 'MISSING').padEnd(12)} ${(s.confirmedFlushLsn ?? '-').padEnd(20)} ${String(s.lagBytes ?? '-').padStart(12)} ${s.walStatus ?? '-'}` +
        (s.publicationExists ? '' : ` (publication ${s.publication} MISSING)`),
    );
    process.stdout.write(`${[head, ...rows].join('\n')}\n`);
  }
  return statuses.every((s) => s.exists && s.publicationExists) ? EXIT.OK : EXIT.PREFLIGHT;
}

async function statusCommand(argv: Record<string, unknown>): Promise<number> {
  const config = toRunConfig(loadConfig(argv, process.env));
  if (config.shards !== undefined && config.shard === undefined) return shardsStatusCommand(argv, config, config.shards);
  const status = await withPgClient(config, (client) =>
    readSlotStatus(client, config.slot, config.publication, { table: config.table, createdAtColumn: config.columnCreatedAt }),
  );
  if (argv.json) {
    process.stdout.write(`${JSON.stringify(status)}\n`);
  } else {
    const lines = [
      `slot                 ${status.slot} ${status.exists ? `(${status.plugin})` : 'MISSING'}`,
      `active               ${status.active ? `yes, pid ${status.activePid}` : 'no'}`,
      `confirmed_flush_lsn  ${status.confirmedFlushLsn ?? '-'}`,
      `restart_lsn          ${status.restartLsn ?? '-'}`,
      `current_wal_lsn      ${status.currentWalLsn}`,
      `lag_bytes            ${status.lagBytes ?? '-'}`,
      `retained_wal_bytes   ${status.retainedWalBytes ?? '-'}`,
      `wal_status           ${status.walStatus ?? '-'}`,
      ...(status.invalidation
        ? [`invalidated          cause ${status.invalidation.reason}: ${status.invalidation.cause}`, `fix                  ${status.invalidation.fix}`]
        : []),
      `failover             ${!status.exists ? '-' : (status.failover ?? '- (no failover slots before PostgreSQL 17)')}${status.synced ? ' (synced copy on a standby)' : ''}`,
      `publication          ${status.publication} ${status.publicationExists ? `(${status.publicationTables.join(', ') || 'no tables'})` : 'MISSING'}`,
      `outbox               ${status.outbox?.totalBytes == null ? 'MISSING' : `${status.outbox.table}: ~${status.outbox.rowsEstimate ?? '?'} rows, ${status.outbox.totalBytes} bytes, oldest ${status.outbox.oldestCreatedAt ?? '-'}`}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return status.exists ? EXIT.OK : EXIT.PREFLIGHT;
}

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

async function verifyCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  const window = parseTimeWindow(argv.from as string, argv.to as string | undefined);
  const report = await withPgClient(config, (client) =>
    verifyOutbox(client, config, { window, marginMs: argv['kafka-margin-ms'] as number, list: argv.list as number }),
  );
  if (report.rows === 0) {
    process.stderr.write(`outbox-tail: warning: no outbox rows created in [${report.from}, ${report.to}) in ${report.table}: check --from/--to and --table\n`);
  }
  process.stdout.write(argv.json ? `${JSON.stringify(report)}\n` : `${verifyLines(report).join('\n')}\n`);
  return report.missing === 0 ? EXIT.OK : EXIT.FATAL;
}

async function replayCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  const window = parseTimeWindow(argv.from as string, argv.to as string | undefined);
  // stdout carries the report: logs (warnings and up unless --log-level asks for more) go to stderr.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
  const report = await withPgClient(config, (client) =>
    replayOutbox(
      client,
      config,
      {
        window,
        onlyMissing: Boolean(argv['only-missing']),
        dryRun: Boolean(argv['dry-run']),
        marginMs: argv['kafka-margin-ms'] as number,
        batchSize: argv['batch-size'] as number,
      },
      logger,
    ),
  );
  if (argv.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const verb = report.dryRun ? 'would publish' : 'published';
    const lines = [
      `window               [${report.from}, ${report.to}) by ${report.table}'s created-at column${report.onlyMissing ? ', rows missing from Kafka only' : ''}`,
      `order                ${report.order === 'commit_timestamp' ? 'commit time (track_commit_timestamp = on), then insert order' : 'created-at column, then insert order (track_commit_timestamp is off)'}`,
      `${verb.padEnd(20)} ${report.dryRun ? report.selected - report.malformed.length : report.published} of ${report.selected} row(s) in ${report.seconds} s`,
      ...Object.entries(report.topics).map(([topic, n]) => `  ${topic} ${n}`),
      ...report.malformed.map((m) => `not sent (malformed) ${m.id ?? '(no id)'}: ${m.reason}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (report.selected === 0) process.stderr.write(`outbox-tail: warning: no rows to replay in [${report.from}, ${report.to}) in ${report.table}\n`);
  return report.malformed.length === 0 ? EXIT.OK : EXIT.BAD_INPUT;
}

async function pruneCommand(argv: Record<string, unknown>): Promise<number> {
  const config = toRunConfig(loadConfig(argv, process.env));
  const olderThanMs = parseDuration('older-than', argv['older-than'] as string);
  const options = { slot: config.slot, olderThanMs, batchSize: argv['batch-size'] as number, dryRun: Boolean(argv['dry-run']) };
  const report = await withPgClient(config, (client) => pruneOutbox(client, config, options));
  if (argv.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const verb = report.dryRun ? 'would delete' : 'deleted';
    process.stdout.write(
      `${verb} ${report.deleted} row(s) of ${report.table} created before ${report.cutoff}${report.dryRun ? '' : ` in ${report.batches} batch(es)`}, ${report.seconds} s\n` +
        (report.heldBack > 0 ? `kept ${report.heldBack} older row(s): slot ${report.slot} may not have passed their transactions yet\n` : ''),
    );
  }
  return EXIT.OK;
}

async function recoverCommand(argv: Record<string, unknown>): Promise<number> {
  const config = toRunConfig(loadConfig(argv, process.env));
  if (argv.margin !== undefined) process.stderr.write('outbox-tail: warning: --margin is deprecated: use --recover-margin-ms (milliseconds)\n');
  const options = {
    sinceMs: argv.since === undefined ? null : parseTime('since', argv.since as string),
    // --margin (a duration, deprecated) still wins over --recover-margin-ms when given.
    marginMs: argv.margin === undefined ? config.recoverMarginMs : parseDuration('margin', argv.margin as string),
    dryRun: Boolean(argv['dry-run']),
    batchSize: argv['batch-size'] as number,
  };
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
  const report = await withPgClient(config, (client) => recoverSlot(client, config, options, logger));
  if (argv.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const r = report.replay;
    process.stdout.write(
      [
        `slot                 ${report.slot} was ${report.found}${report.slotLsn ? `; created anew at ${report.slotLsn}` : ' (dry run: left as it is)'}`,
        `position             ${report.position ? `frontier commit time ${report.position.frontierCommitTime} (recorded ${report.position.updatedAt} by ${report.position.relay})` : 'not used (--since)'}`,
        `backfill             rows created since ${report.backfillFrom}: ${r.dryRun ? 'would publish' : 'published'} ${r.dryRun ? r.selected - r.malformed.length : r.published} of ${r.selected} in ${r.seconds} s`,
        ...r.malformed.map((m) => `not sent (malformed) ${m.id ?? '(no id)'}: ${m.reason}`),
        r.dryRun ? 'next                 run again without --dry-run' : `next                 start the relay on ${report.slot}`,
      ].join('\n') + '\n',
    );
  }
  return report.replay.malformed.length === 0 ? EXIT.OK : EXIT.BAD_INPUT;
}

async function doctorCommand(argv: Record<string, unknown>): Promise<number> {
  const config = toRunConfig(loadConfig(argv, process.env));
  const partitions = argv.partitions as number | undefined;
  if (partitions !== undefined && (!Number.isInteger(partitions) || partitions < 1)) {
    throw new OutboxTailError('CONFIG_INVALID', 'invalid configuration:\n  --partitions: expected a whole number >= 1', {
      hint: 'e.g. --partitions 6',
      exitCode: EXIT.CONFIG,
    });
  }
  const options = {
    maxDowntimeMs: parseDuration('max-downtime', argv['max-downtime'] as string),
    walSampleMs: parseDuration('wal-sample', argv['wal-sample'] as string),
    recoveryWindowMs: parseDuration('recovery-window', argv['recovery-window'] as string),
    pruneOlderThanMs: argv['prune-older-than'] === undefined ? null : parseDuration('prune-older-than', argv['prune-older-than'] as string),
    partitions: partitions ?? null,
    standbyUrl: (argv['standby-url'] as string | undefined) ?? process.env.OUTBOX_TAIL_STANDBY_URL ?? null,
  };
  const report = await runDoctor(config, options, createLogger('silent'));
  process.stdout.write(argv.json ? `${JSON.stringify(report)}\n` : formatDoctorReport(report));
  return report.exitCode;
}

function reshardStepLines(s: ReshardStep): string[] {
  switch (s.step) {
    case 'created':
      return [`1. new slots ${s.slots.join(', ')} created; consistent point ${s.consistentPoint}. Keep the old relays running.`];
    case 'old-past-new':
      return [`2. every old slot confirmed past the consistent point (${s.oldConfirmed.join(', ')}).`];
    case 'stop-old-start-new':
      return [`3. NOW stop the old relays (SIGTERM) of ${s.stop.join(', ')}, then start the new ones:`, ...s.start.map((c) => `     ${c}`)];
    case 'new-past-old':
      return [`4. every new slot confirmed past the old slots' last position ${s.oldLastConfirmed} (${s.newConfirmed.join(', ')}).`];
    case 'dropped':
      return [`5. dropped the old slots ${s.slots.join(', ')} and publications ${s.publications.join(', ')}.`];
  }
}

async function reshardCommand(argv: Record<string, unknown>): Promise<number> {
  const config = toRunConfig(loadConfig(argv, process.env));
  const from = argv.from as number;
  const to = argv.to as number;
  for (const [flag, n] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_SHARDS) {
      throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n  --${flag}: expected a whole number 1-${MAX_SHARDS}`, {
        hint: 'e.g. --from 2 --to 4',
        exitCode: EXIT.CONFIG,
      });
    }
  }
  const options = {
    ...config,
    from,
    to,
    toSlot: (argv['to-slot'] as string | undefined) ?? `${config.slot}_n${to}`,
    toPublication: (argv['to-publication'] as string | undefined) ?? `${config.publication}_n${to}`,
    stepTimeoutMs: argv['step-timeout-ms'] as number,
  };
  const report = await withPgClient(config, (client) =>
    reshard(client, options, (step) => {
      if (!argv.json) process.stdout.write(`${reshardStepLines(step).join('\n')}\n`);
    }),
  );
  process.stdout.write(
    argv.json
      ? `${JSON.stringify(report)}\n`
      : `resharded ${report.from} -> ${report.to}; republished overlap ${report.overlapBytes} bytes of WAL (at least once)\n`,
  );
  return EXIT.OK;
}

const HANDLERS: Record<keyof typeof COMMANDS, (argv: Record<string, unknown>) => Promise<number>> = {
  run: runCommand,
  init: initCommand,
  status: statusCommand,
  reshard: reshardCommand,
  verify: verifyCommand,
  replay: replayCommand,
  prune: pruneCommand,
  recover: recoverCommand,
  doctor: doctorCommand,
};

export async function main(argv: string[] = hideBin(process.argv)): Promise<number> {
  warnSecretsOnCommandLine(argv);
  let code: number = EXIT.OK;
  const handle = (fn: (a: Record<string, unknown>) => Promise<number>) => async (a: Record<string, unknown>) => {
    code = await fn(a);
  };
  let cli = yargs(argv)
    .scriptName('outbox-tail')
    .usage(
      '$0 [run] --slot <name>\n\nRelays committed outbox INSERTs from a PostgreSQL logical replication slot to Kafka, confirming the LSN only after Kafka acknowledged them.',
    );
  for (const name of Object.keys(COMMANDS) as Array<keyof typeof COMMANDS>) cli = command(cli, name, handle(HANDLERS[name]));
  cli = cli
    .env(false)
    .strict()
    .help()
    // Read from the package root like migrations/, not by yargs searching upward from the entry script.
    .version(packageVersion())
    .wrap(Math.min(120, process.stdout.columns ?? 120))
    .fail((message, error) => {
      if (error) throw error;
      throw new OutboxTailError('CONFIG_INVALID', message, { hint: 'see `outbox-tail --help`', exitCode: EXIT.CONFIG });
    });
  try {
    await cli.parseAsync();
  } catch (error) {
    if (OutboxTailError.is(error)) {
      process.stderr.write(`outbox-tail: ${error.code}: ${error.describe()}\n`);
      return error.exitCode;
    }
    process.stderr.write(`outbox-tail: unexpected error: ${(error as Error)?.stack ?? error}\n`);
    return EXIT.FATAL;
  }
  return code;
}
