/**
 * Global setup of the integration and crash projects: starts ONE stack per
 * vitest run (shared by both projects, stopped after the last one finished)
 * and provides its connection details to the test files (inject('stack')).
 *
 * A stack that cannot start fails the run: tests never skip because Postgres
 * or Kafka is unreachable (in CI or anywhere else).
 */
import type { TestProject } from 'vitest/node';
import { redactUrl, startStack, type StackHandle } from '../../dev/stack/index.js';
import './provided-context.js';

interface SharedStack {
  refs: number;
  stack: Promise<StackHandle>;
}

const KEY = Symbol.for('outbox-tail.test.shared-stack');
type WithShared = typeof globalThis & { [KEY]?: SharedStack };

function log(line: string): void {
  process.stderr.write(`[stack] ${line}\n`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // vitest runs a project's global setup once per project, in the main
  // process: share the stack between projects through globalThis.
  const g = globalThis as WithShared;
  let shared = g[KEY];
  if (!shared) {
    const t0 = Date.now();
    const stack = startStack({ log });
    shared = { refs: 0, stack };
    g[KEY] = shared;
    stack.then(
      (s) =>
        console.log(
          `stack: ${s.provider} postgres=${s.versions.postgres} kafka=${s.versions.kafka} ` +
            (s.images ? `images=${s.images.postgres},${s.images.kafka} ` : '') +
            `(${redactUrl(s.databaseUrl)} , ${s.brokers.join(',')}) started in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        ),
      () => undefined,
    );
  }
  shared.refs++;
  let stack: StackHandle;
  try {
    stack = await shared.stack;
  } catch (err) {
    shared.refs--;
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `the test stack (Postgres + Kafka) could not start, so project "${project.name}" cannot run.\n${reason}\n` +
        'Tests never skip for a missing server: fix the stack (npm run setup, a Docker engine, or ' +
        'OUTBOX_TAIL_STACK=external with OUTBOX_TAIL_TEST_DATABASE_URL and OUTBOX_TAIL_TEST_BROKERS).',
      { cause: err },
    );
  }
  project.provide('stack', {
    provider: stack.provider,
    databaseUrl: stack.databaseUrl,
    brokers: stack.brokers,
    versions: stack.versions,
  });
  return async () => {
    const s = g[KEY];
    if (!s) return;
    s.refs--;
    if (s.refs === 0) {
      delete g[KEY];
      await stack.stop();
    }
  };
}
