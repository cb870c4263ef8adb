import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { carriesCredentials, redactText, redactUrl } from '../shared/redact-secrets.js';
import { configSchema } from './config-schema.js';
import type { RelayConfig } from './relay-config.js';
import { DEPRECATED_OPTIONS, deprecatedKeys, envName, flagName, OPTIONS, optionKeys, type DeprecatedKey, type OptionKey, type OptionSpec } from './options.js';

export interface ConfigSources {
  /** Parsed command-line flags, camelCase keys; undefined means "not given". */
  flags?: Partial<Record<string, unknown>>;
  /** The environment to read OUTBOX_TAIL_* (and DATABASE_URL) from. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Path of a JSON or YAML config file. */
  configFile?: string;
  /** Told once per process about each deprecated option in use; default: a line on stderr. */
  warn?: (message: string) => void;
}

const warned = new Set<string>();
const warnOnStderr = (message: string) => {
  if (warned.has(message)) return;
  warned.add(message);
  process.stderr.write(redactText(`outbox-tail: warning: ${message}\n`));
};

type Origin = 'flag' | 'env' | 'file' | 'default';

/** Precedence: flags > env (OUTBOX_TAIL_*) > config file > schema defaults. */
export function resolveConfig(sources: ConfigSources): RelayConfig {
  const merged: Record<string, unknown> = {};
  const origin = new Map<string, string>();
  const warn = sources.warn ?? warnOnStderr;
  const layer = (values: Record<string, unknown>, from: Origin, label: (k: string) => string) => {
    for (const [key, value] of Object.entries(
      withoutDeprecated(values, (old, replacement) =>
        warn(`${from} ${label(old)} is deprecated: use ${describeOption(replacement)} (it is converted for now)`),
      ),
    )) {
      if (value === undefined) continue;
      merged[key] = value;
      origin.set(key, `${from} ${label(deprecatedSource(values, key) ?? key)}`);
    }
  };
  if (sources.configFile) layer(readConfigFile(sources.configFile), 'file', (k) => `${sources.configFile}: ${k}`);
  if (sources.env) layer(fromEnv(sources.env), 'env', (k) => envSource(sources.env!, k as OptionKey | DeprecatedKey));
  if (sources.flags) layer(pickKnown(sources.flags), 'flag', (k) => `--${flagName(k as OptionKey | DeprecatedKey)}`);

  const result = configSchema.safeParse(merged);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    if (issue.code === 'unrecognized_keys') {
      return `  unknown option(s) ${issue.keys.join(', ')} (from ${[...new Set(issue.keys.map((k) => origin.get(k) ?? 'input'))].join(', ')})`;
    }
    const names = key in OPTIONS ? `--${flagName(key as OptionKey)} / ${envName(key as OptionKey)}` : key;
    const value = merged[key];
    // The source is always named; the value only when it holds no secret (issue 42).
    const shown = origin.has(key) && !isSecret(key, value) ? `${JSON.stringify(value)} ` : '';
    const given = origin.has(key) ? ` (given ${shown}by ${origin.get(key)})` : '';
    const message = Array.isArray(value) && OPTIONS[key as OptionKey]?.type !== 'array' ? 'given more than once; give it once' : issue.message;
    return `  ${names}: ${message}${given}`;
  });
  throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n${lines.join('\n')}`, {
    hint: 'correct the options above; `outbox-tail --help` lists every option and its env var',
    exitCode: EXIT.CONFIG,
  });
}

/** A value not to print: its option is marked secret, or it carries a credential by its form (redact-secrets.ts). */
function isSecret(key: string, value: unknown): boolean {
  return (key in OPTIONS && OPTIONS[key as OptionKey].secret === true) || carriesCredentials(JSON.stringify(value) ?? '');
}

const allKeys: ReadonlyArray<OptionKey | DeprecatedKey> = [...optionKeys, ...deprecatedKeys];

function specOf(key: OptionKey | DeprecatedKey): OptionSpec {
  return key in DEPRECATED_OPTIONS ? DEPRECATED_OPTIONS[key as DeprecatedKey].spec : OPTIONS[key as OptionKey];
}

function describeOption(key: OptionKey): string {
  return `--${flagName(key)} / ${envName(key)}`;
}

/**
 * One source's values with deprecated keys converted into their replacement
 * (`report` is told about each); within one source the new name wins.
 */
function withoutDeprecated(values: Record<string, unknown>, report: (old: DeprecatedKey, replacement: OptionKey) => void): Record<string, unknown> {
  const out = { ...values };
  for (const old of deprecatedKeys) {
    if (out[old] === undefined) continue;
    const { replacement, convert } = DEPRECATED_OPTIONS[old];
    report(old, replacement);
    if (out[replacement] === undefined) out[replacement] = convert(out[old]);
    delete out[old];
  }
  return out;
}

/** The deprecated key a converted value came from, so errors name what the user wrote. */
function deprecatedSource(values: Record<string, unknown>, key: string): DeprecatedKey | undefined {
  if (values[key] !== undefined) return undefined;
  return deprecatedKeys.find((old) => DEPRECATED_OPTIONS[old].replacement === key && values[old] !== undefined);
}

function pickKnown(flags: Partial<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of allKeys) if (flags[key] !== undefined) out[key] = flags[key];
  return out;
}

function envNames(key: OptionKey | DeprecatedKey): string[] {
  return [envName(key), ...(specOf(key).aliasesEnv ?? [])];
}

function fromEnv(env: Readonly<Record<string, string | undefined>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of allKeys) {
    const name = envNames(key).find((n) => env[n] !== undefined && env[n] !== '');
    if (name) out[key] = env[name];
  }
  return out;
}

function envSource(env: Readonly<Record<string, string | undefined>>, key: OptionKey | DeprecatedKey): string {
  return envNames(key).find((n) => env[n] !== undefined && env[n] !== '') ?? envName(key);
}

/** The YAML parser, loaded only when a YAML config file is read (a relay without one saves its memory). */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yaml.parse(text);
}

/**
 * The largest config file read. Every option fits in a few kB, so a bigger file
 * is a mistake (a log, a dump given as --config), and reading and parsing it
 * whole costs a multiple of its size: a 50 MB YAML file took 2 GB of RSS.
 */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** The file's text, refused as soon as more than MAX_CONFIG_FILE_BYTES were read (a pipe or /dev/zero has no size to check first). */
function readBounded(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(MAX_CONFIG_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_CONFIG_FILE_BYTES) {
      throw new OutboxTailError('CONFIG_INVALID', `config file ${path} is larger than 1 MiB, the most a config file may hold`, {
        hint: 'check the --config path (OUTBOX_TAIL_CONFIG): a config file holds options, a few kB',
        exitCode: EXIT.CONFIG,
      });
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** Reads a config file; keys may be camelCase or kebab-case. */
export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readBounded(path);
  } catch (error) {
    if (OutboxTailError.is(error)) throw error;
    throw new OutboxTailError('CONFIG_INVALID', `cannot read config file ${path}: ${(error as Error).message}`, {
      hint: 'check the --config path (OUTBOX_TAIL_CONFIG)',
      exitCode: EXIT.CONFIG,
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    // The parsers quote the lines around the error, which may hold a secret: only where it is, never the text.
    throw new OutboxTailError('CONFIG_INVALID', `config file ${path} is not valid ${/\.json$/i.test(path) ? 'JSON' : 'YAML'}${syntaxErrorPlace(error)}`, {
      hint: "the file's text is not shown, as it may hold secrets",
      exitCode: EXIT.CONFIG,
    });
  }
  if (data == null) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new OutboxTailError('CONFIG_INVALID', `config file ${path} must hold an object of options`, { exitCode: EXIT.CONFIG });
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    out[key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = value;
  }
  return out;
}

/** Where a JSON or YAML syntax error is (" at line L, column C"), from the parser's error without its quote of the text. */
function syntaxErrorPlace(error: unknown): string {
  const yamlPos = (error as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
  if (yamlPos) return ` at line ${yamlPos.line}, column ${yamlPos.col}`;
  const json = /\(line (\d+) column (\d+)\)/.exec((error as Error).message ?? '');
  return json ? ` at line ${json[1]}, column ${json[2]}` : '';
}

/** The config as it may be logged: secrets replaced, URLs without passwords. */
export function redactConfig(config: RelayConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of optionKeys) {
    const value = out[key];
    if (typeof value !== 'string') continue;
    // URLs keep their shape (host, database) for diagnosis; any other secret is hidden whole.
    if (OPTIONS[key].secret) out[key] = key === 'databaseUrl' ? redactUrl(value) : '***';
    else if (carriesCredentials(value)) out[key] = redactText(value);
  }
  return out;
}
