import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { packageVersion } from '../shared/package-version.js';
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
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { carriesCredentials, redactText } from '../shared/redact-secrets.js';
import type { Command, CommandArgs, CommandIo } from '../commands/command.js';
import { CONFIG_FILE_OPTION } from './command-options.js';
import { COMMANDS } from './command-registry.js';

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
  const configFile = (typeof argv.config === 'string' ? argv.config : undefined) ?? env.OUTBOX_TAIL_CONFIG;
  return resolveConfig({ flags: argv, env, ...(configFile ? { configFile } : {}) });
}

/** Command options (not config options) that take a URL which may carry a password, and where else they can be given. */
const URL_COMMAND_OPTIONS: Readonly<Record<string, string>> = { 'standby-url': 'OUTBOX_TAIL_STANDBY_URL' };

/**
 * Every flag on the command line that carries a secret, with where to give it
 * instead: options marked secret (unless the value is a URL with no credential
 * in it), and any flag whose value carries a credential by its form.
 */
function secretsOnCommandLine(argv: string[]): Array<{ flag: string; inValue: boolean; instead: string }> {
  const found = new Map<string, { flag: string; inValue: boolean; instead: string }>();
  argv.forEach((arg, i) => {
    const match = /^--([a-zA-Z][\w-]*)(?:=([\s\S]*))?$/.exec(arg);
    if (!match) return;
    const name = match[1]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const next = argv[i + 1];
    const value = match[2] ?? (next !== undefined && !next.startsWith('--') ? next : undefined);
    const key = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as OptionKey;
    const secretOption = key in OPTIONS && OPTIONS[key].secret === true;
    const inValue = value !== undefined && carriesCredentials(value);
    const plainUrl = value !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(value) && !inValue;
    if (!inValue && !(secretOption && !plainUrl)) return;
    const alternatives =
      key in OPTIONS
        ? [`${key}File` in OPTIONS ? `--${name}-file` : null, envName(key), 'a config file'].filter((a): a is string => a !== null)
        : [URL_COMMAND_OPTIONS[name] ?? 'an environment variable'];
    found.set(name, { flag: `--${name}`, inValue, instead: alternatives.join(', ').replace(/, (?=[^,]*$)/, ' or ') });
  });
  return [...found.values()];
}

function warnSecretsOnCommandLine(argv: string[]): void {
  for (const { flag, inValue, instead } of secretsOnCommandLine(argv)) {
    process.stderr.write(`outbox-tail: warning: ${inValue ? `a password in ${flag}` : flag} is visible in \`ps\`; use ${instead}\n`);
  }
}

const io: CommandIo = {
  env: process.env,
  warn: (message) => void process.stderr.write(redactText(`outbox-tail: warning: ${message}\n`)),
  progress: (line) => void process.stdout.write(redactText(`${line}\n`)),
};

/** Loads the config the command asks for, runs it, prints what its formatter made of the result; its exit code. */
async function execute(command: Command, argv: CommandArgs<Command['options']>): Promise<number> {
  const config = command.config(loadConfig(argv, io.env));
  const output = command.format(await command.run(config, argv, io), argv);
  // Text and --json alike: a credential that reached a report (a driver's error quoted in a check) is masked.
  if (output.stdout) process.stdout.write(redactText(output.stdout));
  return output.exitCode;
}

export async function main(argv: string[] = hideBin(process.argv)): Promise<number> {
  warnSecretsOnCommandLine(argv);
  let code: number = EXIT.OK;
  const handle = (command: Command) => async (argv: CommandArgs<Command['options']>) => {
    code = await execute(command, argv);
  };
  let cli = yargs(argv)
    .scriptName('outbox-tail')
    .usage(
      '$0 [run] --slot <name>\n\nRelays committed outbox INSERTs from a PostgreSQL logical replication slot to Kafka, confirming the LSN only after Kafka acknowledged them.',
    );
  for (const command of COMMANDS) {
    cli = cli.command([...command.names], command.describe, (c) => withConfigOptions(c).options(command.options), handle(command));
  }
  cli = cli
    .env(false)
    .strict()
    .help()
    // Read from the package root like migrations/, not by yargs searching upward from the entry script.
    .version(packageVersion())
    .wrap(Math.min(120, process.stdout.columns ?? 120))
    .fail((message, error) => {
      // yargs reports its own checks, and a refusing option coerce (wholeNumberOption), as a YError: a usage error.
      if (error && error.name !== 'YError') throw error;
      throw new OutboxTailError('CONFIG_INVALID', message ?? error?.message, { hint: 'see `outbox-tail --help`', exitCode: EXIT.CONFIG });
    });
  try {
    await cli.parseAsync();
  } catch (error) {
    if (OutboxTailError.is(error)) {
      process.stderr.write(redactText(`outbox-tail: ${error.code}: ${error.describe()}\n`));
      return error.exitCode;
    }
    process.stderr.write(redactText(`outbox-tail: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`));
    return EXIT.FATAL;
  }
  return code;
}
