/**
 * The fault suite (issue 7) in vitest: every scenario of scenarios.ts, at least
 * once, on a fault stack of this file's own (the scenarios kill, pause and cut
 * its servers), one after the other. Their negative controls are in
 * faults-controls.test.ts, the exactly-once runs in faults-exactly-once.test.ts
 * and the table-less outbox in faults-messages.test.ts: four files, four
 * stacks, so they run side by side. `npm run faults` runs the same scenarios
 * from the command line.
 */
import { describe, expect, it } from 'vitest';
import { SCENARIOS } from './scenarios.js';
import { log, report, useFaultStack } from './fault-suite.js';

const stack = useFaultStack('scenarios');
// OUTBOX_TAIL_FAULTS_ONLY=a,b: only these scenarios (a CI matrix entry on another PostgreSQL); all by default.
const only = process.env.OUTBOX_TAIL_FAULTS_ONLY?.split(',').filter(Boolean);
for (const name of only ?? []) if (!SCENARIOS.some((s) => s.name === name)) throw new Error(`OUTBOX_TAIL_FAULTS_ONLY: unknown scenario ${name}`);

describe('fault scenarios: each under a steady writer, invariants I1-I12 that apply, with counts', () => {
  for (const s of SCENARIOS.filter((x) => !only || only.includes(x.name))) {
    it(`${s.name}: ${s.title}`, async () => {
      const r = report(await s.run({ fs: stack.fs, log }));
      expect(r.failed, r.detail).toEqual([]);
      expect({ passed: r.passed, lost: r.lost, phantoms: r.phantoms }).toEqual({ passed: true, lost: 0, phantoms: 0 });
    }, 600_000);
  }
});
