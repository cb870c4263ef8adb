import type { Command } from '../commands/command.js';
import { doctorCommand } from '../commands/doctor/doctor-command.js';
import { initCommand } from '../commands/init/init-command.js';
import { pruneCommand } from '../commands/prune/prune-command.js';
import { recoverCommand } from '../commands/recover/recover-command.js';
import { replayCommand } from '../commands/replay/replay-command.js';
import { reshardCommand } from '../commands/reshard/reshard-command.js';
import { runCommand } from '../commands/run/run-command.js';
import { statusCommand } from '../commands/status/status-command.js';
import { verifyCommand } from '../commands/verify/verify-command.js';
import type { CommandSpec } from './command-options.js';

/** Every subcommand, in the order `outbox-tail --help` lists them; main.ts declares each to yargs the same way. */
export const COMMANDS: readonly Command[] = [
  runCommand,
  initCommand,
  reshardCommand,
  statusCommand,
  verifyCommand,
  replayCommand,
  pruneCommand,
  recoverCommand,
  doctorCommand,
];

/**
 * The commands' names, descriptions and own options, by name, for docs/configuration.md (npm run docs).
 * @public (read by dev/docs only: not part of the production graph)
 */
export const COMMAND_SPECS: Readonly<Record<string, CommandSpec>> = Object.fromEntries(
  COMMANDS.map(({ names, describe, options }) => [names[0]!, { names, describe, options }]),
);
