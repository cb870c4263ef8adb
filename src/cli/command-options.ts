import type { Options } from 'yargs';

/**
 * A subcommand as the docs list it: its names, description and the options it
 * takes besides the config options (config-schema.ts). Each command declares
 * them in its own file (src/commands/); command-registry.ts collects them.
 */
export interface CommandSpec {
  /** The command's name (the first) and its aliases; `$0` makes it the default command. */
  names: readonly string[];
  describe: string;
  options: Readonly<Record<string, Options>>;
}

/** The config file flag every command takes; OUTBOX_TAIL_CONFIG is its env var. */
export const CONFIG_FILE_OPTION = {
  flag: 'config',
  env: 'OUTBOX_TAIL_CONFIG',
  options: { type: 'string', describe: 'JSON or YAML config file (keys: the option names, camelCase or kebab-case)', group: 'Config file:' },
} as const satisfies { flag: string; env: string; options: Options };
