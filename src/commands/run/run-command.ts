import { toRunConfig } from '../../config/run-config.js';
import { defineCommand } from '../command.js';
import { runDaemon } from './run-daemon.js';

export const runCommand = defineCommand({
  names: ['run', '$0'],
  describe: 'tail the slot and publish to Kafka (the daemon)',
  options: {},
  config: toRunConfig,
  run: (config) => runDaemon(config),
  // The daemon logs; its exit code says how it ended.
  format: (exitCode) => ({ stdout: '', exitCode }),
});
