// Mutation testing of the safety core (issue 11): `npm run mutate`.
// Not part of CI (it takes minutes); the unit tests only, never the servers.
// @ts-check

/**
 * The pure core, in one place: the files whose every decision a unit test can
 * reach (no sockets, no servers; timers and the connection are injected).
 */
const mutate = [
  'src/pipeline/checkpoint/checkpointer.ts',
  'src/pipeline/assemble/outbox-columns.ts',
  'src/pipeline/assemble/transaction-assembler.ts',
  'src/pipeline/assemble/row-mapper.ts',
  'src/pipeline/decode/pgoutput-decoder.ts',
  'src/shared/lsn.ts',
  'src/pipeline/source/standby-status.ts',
  'src/pipeline/checkpoint/status-sender.ts',
  'src/pipeline/publish/record-format/record-builder.ts',
  'src/kafka/platformatic/murmur2.ts',
  'src/pipeline/publish/record-format/topic-template.ts',
  'src/pipeline/publish/fifo.ts',
  'src/pipeline/publish/batching.ts',
  'src/pipeline/publish/backpressure.ts',
  'src/pipeline/publish/bad-row-policy.ts',
  'src/pipeline/publish/malformed-policy.ts',
  'src/pipeline/publish/oversize-policy.ts',
  'src/pipeline/publish/skip-published.ts',
  'src/sink/watermark.ts',
  'src/pipeline/assemble/rfc3339-timestamp.ts',
  'src/pipeline/assemble/message-content.ts',
  'src/commands/time-window.ts',
];

/*
 * Known survivors, each equivalent to the original (checked by hand; line
 * numbers as of issue 25 part 6, npm run mutate 98.02% overall, every file >= 90%):
 *   row-mapper.ts:41            `?? -1` -> `?? +1`: createdAtType is read only for a created_at value, and
 *                               a table without that column gives none (its index stays -1)
 *   row-mapper.ts:52            `at < 0` -> false: values[-1] of an array is undefined, as returned
 *   pgoutput-decoder.ts:85      `end < 0` -> `end <= 0`: a string never starts at offset 0 (the tag is there)
 *   pgoutput-decoder.ts:100     `new Array(count)` -> `new Array()`: every index is assigned before return
 *   murmur2.ts:23, :24          `rest === 3` / `rest >= 2` -> true: the bytes past the end read as 0, xor 0
 *   record-builder.ts:20        initial lsnText: always overwritten by the first build (lsnTxn starts null)
 *   record-builder.ts:27, :46, :51  the all-six-headers / no-user-headers fast paths forced off: the general
 *                               paths build the same headers in the same order and the same byte count
 *                               (record-builder.test.ts, record-builder-dead-letter.test.ts)
 *   status-sender.ts:67         `if (this.timer)` -> true: clearInterval(null) does nothing, as skipping it does
 *   time-window.ts:38           the zoned-time regex without `^` or `$`: Date.parse (V8) refuses every
 *                               such extra text anyway (time-window.test.ts, "anchors every form")
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
