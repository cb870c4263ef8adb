import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take minutes, longest first (seconds measured on a 2-core
 * machine, fresh clone): started first, they run beside everything else
 * instead of after it, which is what keeps `npm test` near its longest file.
 * Vitest's own order needs a cache of durations that a fresh clone does not have.
 */
const LONG_FILES: ReadonlyArray<string> = [
  'test/faults/faults-exactly-once.test.ts',
  'test/faults/faults.test.ts',
  // Mostly waiting (PostgreSQL 18's idle_replication_slot_timeout counts in minutes): started first, it waits
  // beside the others instead of alone at the end of the PostgreSQL 18 entry (it ran last there, 90 s).
  'test/pg18/doctor-pg18.test.ts',
  'test/crash/crash.test.ts',
  'test/crash/crash-controls.test.ts',
  'test/crash/crash-messages.test.ts',
  'test/crash/crash-exactly-once.test.ts',
  'test/faults/faults-controls.test.ts',
  'test/faults/faults-messages.test.ts',
  'test/faults/faults-late-requests.test.ts',
  'test/crash/crash-adjacent-commits.test.ts',
  'test/faults/faults-slot.test.ts',
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONG_FILES.indexOf(relative(spec.project.config.root, spec.moduleId));
      return i < 0 ? LONG_FILES.length : i;
    };
    // Array.prototype.sort is stable: the rest keeps vitest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
