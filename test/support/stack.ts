import { inject } from 'vitest';
import type { StackConnection } from '../../dev/stack/index.js';
import './provided-context.js';

/** The run's shared stack (started by test/support/global-setup.ts). */
export function getStack(): StackConnection {
  const stack = inject('stack');
  if (!stack) {
    throw new Error(
      'no test stack was provided: run this file through the integration or crash project ' +
        '(npx vitest run --project integration), whose global setup starts the stack',
    );
  }
  return stack;
}
