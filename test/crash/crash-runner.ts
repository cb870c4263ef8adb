import { getStack } from '../support/stack.js';
import { formatResult, runCrash, type CrashOptions, type CrashResult } from './crash-harness.js';

/**
 * Status updates far apart: every kill replays all that was published since the last confirm, so duplicates are
 * certain, not a lucky race.
 */
export const NO_PERIODIC_CONFIRM = { OUTBOX_TAIL_STATUS_INTERVAL_MS: '600000' };

/** Runs the crash test on this run's stack (test/support/stack.ts) and prints the recount, as the crash files do. */
export function crashRunner(): (options: Omit<CrashOptions, 'stack' | 'log'>) => Promise<CrashResult> {
  const stack = getStack();
  return (options) =>
    runCrash({ stack, log: (line) => console.log(line), ...options }).then((result) => {
      console.log(formatResult(result));
      return result;
    });
}
