// Mutation testing of the safety core (issue 11): `npm run mutate`.
// Not part of CI (it takes minutes); the unit tests only, never the servers.
// @ts-check

/**
 * The pure core, in one place. Add the publishing policies when they move out
 * of src/relay (src/publish/*-policy.ts).
 */
const mutate = [
  'src/checkpoint/checkpointer.ts',
  'src/outbox/transaction-assembler.ts',
  'src/outbox/row-mapper.ts',
  'src/replication/pgoutput-decoder.ts',
  'src/replication/lsn.ts',
  'src/replication/standby-status.ts',
  'src/sink/record-builder.ts',
  'src/sink/murmur2.ts',
  'src/sink/topic-template.ts',
  'src/relay/fifo.ts',
];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate,
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.unit.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // The machine has 2 cores shared with other work.
  concurrency: 1,
  reporters: ['clear-text', 'progress', 'json'],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 10_000,
};
