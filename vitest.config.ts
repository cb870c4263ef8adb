import { defineConfig } from 'vitest/config';

// Five projects:
//   unit         pure tests, no servers, no global setup
//   integration  real Postgres + Kafka from ONE stack per run (test/support/global-setup.ts)
//   crash        same shared stack; files that need fault hooks start their own stack
//   faults       fault injection (issue 7) on a stack of its own (test/faults/fault-stack.ts):
//                one file at a time, so it runs after the other projects, alone
//   containers   the relay image, the systemd unit and container cleanup in real containers: needs a
//                container engine (bin/with-engine.sh npx vitest run --project containers), so
//                it is NOT part of a plain `vitest run`; each file starts its own containers
// A stack that cannot start fails the run; no test ever skips for a missing server.
const stackSetup = ['test/support/global-setup.ts'];
// The containers project exists only when asked for by name (--project containers),
// so that `vitest run` / `npm test` never need a container engine.
const containersSelected = process.argv.some((arg, i, all) => (arg === '--project' && all[i + 1] === 'containers') || arg === '--project=containers');

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: stackSetup },
      },
      {
        extends: true,
        test: { name: 'crash', include: ['test/crash/**/*.test.ts'], globalSetup: stackSetup },
      },
      {
        extends: true,
        test: { name: 'faults', include: ['test/faults/**/*.test.ts'], fileParallelism: false },
      },
      ...(containersSelected
        ? [
            {
              extends: true as const,
              test: { name: 'containers', include: ['test/containers/**/*.test.ts'], fileParallelism: false },
            },
          ]
        : []),
    ],
  },
});
