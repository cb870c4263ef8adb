// Mutation testing of the safety core (issue 11): `npm run mutate`.
// Not part of CI (it takes minutes); the unit tests only, never the servers.
// @ts-check

/**
 * The pure core, in one place: the files whose every decision a unit test can
 * reach (no sockets, no servers; timers and the connection are injected).
 */
const mutate = [
  'src/checkpoint/checkpointer.ts',
  'src/outbox/outbox-columns.ts',
  'src/outbox/transaction-assembler.ts',
  'src/outbox/row-mapper.ts',
  'src/replication/pgoutput-decoder.ts',
  'src/replication/lsn.ts',
  'src/replication/standby-status.ts',
  'src/replication/status-sender.ts',
  'src/record-format/record-builder.ts',
  'src/kafka-clients/platformatic/murmur2.ts',
  'src/record-format/topic-template.ts',
  'src/publish/fifo.ts',
  'src/publish/batching.ts',
  'src/publish/backpressure.ts',
  'src/publish/bad-row-policy.ts',
  'src/publish/malformed-policy.ts',
  'src/publish/oversize-policy.ts',
  'src/exactly-once/skip-published.ts',
  'src/exactly-once/watermark.ts',
  'src/outbox/rfc3339-timestamp.ts',
  'src/outbox/message-content.ts',
  'src/recovery/time-window.ts',
];

/*
 * Known survivors, each equivalent to the original (checked by hand; line
 * numbers as of the final formatting, npm run mutate 98.72% overall):
 *   row-mapper.ts:49            `at < 0` -> false: values[-1] of an array is undefined, as returned
 *   transaction-assembler.ts:71 empty `default:` falls out of the switch: the same `return`
 *   pgoutput-decoder.ts:85      `end < 0` -> `end <= 0`: a string never starts at offset 0 (the tag is there)
 *   pgoutput-decoder.ts:100     `new Array(count)` -> `new Array()`: every index is assigned before return
 *   murmur2.ts:23, :24          `rest === 3` / `rest >= 2` -> true: the bytes past the end read as 0, xor 0
 *   record-builder.ts:16        initial lsnText: always overwritten by the first build (lsnTxn starts null)
 *   record-builder.ts:42, :47   the no-user-headers fast path forced off: the general path builds the
 *                               same headers in the same order and the same byte count (record-builder.test.ts)
 *   status-sender.ts:67         `if (this.timer)` -> true: clearInterval(null) does nothing, as skipping it does
 */

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
