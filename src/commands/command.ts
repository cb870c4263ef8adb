import type { InferredOptionTypes, Options } from 'yargs';
import type { RelayConfig } from '../config/relay-config.js';
import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';

/** A command's own options (besides the config options every command takes), as yargs declares them. */
export type CommandOptions = Readonly<Record<string, Options>>;

/** The arguments of a command's own options, typed from their declaration (no casts in the handlers). */
export type CommandArgs<O extends CommandOptions> = InferredOptionTypes<O>;

/** What a command may do besides returning its result: its environment, and lines it prints while it runs. */
export interface CommandIo {
  readonly env: NodeJS.ProcessEnv;
  /** A warning on stderr, at once (`outbox-tail: warning: ...`). */
  warn(message: string): void;
  /** A line on stdout while the command runs (reshard's steps). */
  progress(line: string): void;
}

/** What a command prints on stdout when it is done, and its exit code. */
export interface CommandOutput {
  readonly stdout: string;
  readonly exitCode: number;
}

/**
 * One subcommand, in one shape: its names, description and own options
 * (src/cli declares them to yargs and docs/configuration.md lists them), the
 * config it needs, its run, and its formatter (text or --json). The CLI only
 * maps arguments: it loads the config, calls run, then format, and prints.
 */
export interface Command<O extends CommandOptions = CommandOptions, C = unknown, R = unknown> {
  /** The name (the first) and its aliases; `$0` makes it the default command. */
  readonly names: readonly string[];
  readonly describe: string;
  readonly options: O;
  /** The config the command runs with, from the resolved options (toRunConfig when it needs the slot checked). */
  config(resolved: RelayConfig): C;
  run(config: C, args: CommandArgs<O>, io: CommandIo): Promise<R>;
  format(result: R, args: CommandArgs<O>): CommandOutput;
}

/** Declares a command; the identity, so its option, config and result types are inferred once, here. */
export function defineCommand<const O extends CommandOptions, C, R>(command: Command<O, C, R>): Command<O, C, R> {
  return command;
}

/** --json, which most commands take. */
export const JSON_OPTION = { type: 'boolean', describe: 'print one JSON object' } as const satisfies Options;

/** --from and --to of the commands that work on a window of creation times (verify, replay). */
export const TIME_WINDOW_OPTIONS = {
  from: { type: 'string', demandOption: true, describe: 'window start: a time with a zone (2026-12-01T12:00:00Z) or a span back from now (2h)' },
  to: { type: 'string', describe: 'window end, excluded [default: now]' },
} as const satisfies CommandOptions;

/** A JSON line, the --json output of every command. */
export const jsonLine = (value: unknown): string => `${JSON.stringify(value)}\n`;

/**
 * A whole-number option of a command, checked when the arguments are parsed,
 * so before any connection: yargs alone turns "abc" into NaN and passes 0, -1
 * or 1.5 on to the database.
 */
export function wholeNumberOption(flag: string, spec: { min: number; max: number; default: number; describe: string }) {
  return {
    type: 'number',
    default: spec.default,
    describe: `${spec.describe} [range: ${spec.min}-${spec.max}]`,
    coerce: (value: number): number => {
      if (Number.isInteger(value) && value >= spec.min && value <= spec.max) return value;
      throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n  --${flag}: expected a whole number from ${spec.min} to ${spec.max}`, {
        hint: 'see `outbox-tail <command> --help`',
        exitCode: EXIT.CONFIG,
      });
    },
  } as const satisfies Options;
}
