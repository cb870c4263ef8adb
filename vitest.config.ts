import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first-sequencer.js';

// Five projects:
//   unit         pure tests, no servers, no global setup
//   integration  real Postgres + Kafka from ONE stack per run (test/support/global-setup.ts)
//   crash        same shared stack; files that need fault hooks start their own stack
//   faults       fault injection (issue 7): each file on a fault stack of its own (test/faults/fault-suite.ts),
//                so its files run beside each other and beside the other projects
//   containers   the relay image, the systemd unit and container cleanup in real containers: needs a
//                container engine (bin/with-engine.sh npx vitest run --project containers), so
//                it is NOT part of a plain `vitest run`; each file starts its own containers
// A stack that cannot start fails the run; no test ever skips for a missing server.
const stackSetup = ['test/support/global-setup.ts'];
// The containers project exists only when asked for by name (--project containers),
// so that `vitest run` / `npm test` never need a container engine.
const selected = (name: string) => process.argv.some((arg, i, all) => (arg === '--project' && all[i + 1] === name) || arg === `--project=${name}`);
const containersSelected = selected('containers');
// pg18: PostgreSQL 18's slot settings (idle_replication_slot_timeout, synchronized_standby_slots) changed on a
// server of the file's own (they act on every slot of a server; relayTestbed ownStack, so no shared stack), through bin/with-engine.sh with
// OUTBOX_TAIL_PG_MAJOR=18; only when asked for by name, like containers.
const pg18Selected = selected('pg18');
const standbySelected = selected('standby');

// Most of a file's time is spent waiting on servers, kills and restarts, not on CPU: on our 2-core
// machines four files at once take about a third of the time of one at a time (vitest's default
// there is one), with the longest ones started first. OUTBOX_TAIL_TEST_WORKERS overrides it.
const WORKERS = Number(process.env.OUTBOX_TAIL_TEST_WORKERS ?? 4);

export default defineConfig({
  test: {
    maxWorkers: WORKERS,
    sequence: { sequencer: LongestFirstSequencer },
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
        test: { name: 'faults', include: ['test/faults/**/*.test.ts'] },
      },
      ...(containersSelected
        ? [
            {
              extends: true as const,
              test: { name: 'containers', include: ['test/containers/**/*.test.ts'], fileParallelism: false },
            },
          ]
        : []),
      ...(pg18Selected ? [{ extends: true as const, test: { name: 'pg18', include: ['test/pg18/**/*.test.ts'] } }] : []),
      // standby: a PostgreSQL 16 primary and hot standby of each file's own (bin/setup-postgres16.sh), with the
      // stack's Kafka: decoding on a standby (docs/standby-decoding.md). Its own CI entry; asked for by name.
      ...(standbySelected ? [{ extends: true as const, test: { name: 'standby', include: ['test/standby/**/*.test.ts'] } }] : []),
    ],
  },
});
