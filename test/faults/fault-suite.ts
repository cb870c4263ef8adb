/**
 * What every file of the fault project shares: a fault stack of its own for
 * the file (the scenarios kill, pause and cut its servers, so no other file
 * may use it), started before its first scenario and stopped after its last,
 * and the line each scenario result prints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultStack, type FaultStack } from './fault-stack.js';
import { SCENARIOS } from './scenarios.js';

type FaultStackOptions = Omit<NonNullable<Parameters<typeof startFaultStack>[0]>, 'log'>;
import type { ScenarioResult } from './harness.js';

export const log = (line: string): void => console.log(line);

/** The file's fault stack, for its tests (set in beforeAll). */
export function useFaultStack(label: string, options: FaultStackOptions = {}): { readonly fs: FaultStack } {
  const holder: { fs: FaultStack | null } = { fs: null };
  beforeAll(async () => {
    holder.fs = await startFaultStack({ ...options, log: (l) => console.log(`[stack] ${l}`) });
    const { provider, versions, images } = holder.fs.stack;
    console.log(
      `stack: ${provider} postgres=${versions.postgres} kafka=${versions.kafka}${images ? ` images=${images.postgres},${images.kafka}` : ''} (faults project, ${label})`,
    );
  }, 180_000);
  afterAll(async () => {
    await holder.fs?.stop();
  });
  return {
    get fs(): FaultStack {
      if (!holder.fs) throw new Error('the fault stack has not started (beforeAll failed)');
      return holder.fs;
    },
  };
}

export function report(r: ScenarioResult): ScenarioResult {
  console.log(
    `${r.name}: ${r.passed ? 'PASS' : 'FAIL'} in ${r.seconds} s: lost ${r.lost}, duplicates ${r.duplicates}, phantoms ${r.phantoms}, recovery ${r.recovery_seconds} s\n  ${r.detail}`,
  );
  return r;
}

/** A relay that confirms on receipt either loses what it confirmed and then dropped (I1), or publishes it after the slot had passed it (I7): which one depends on when the fault hits. */
export const unsafe = (r: ScenarioResult): number => r.lost + (r.counts?.lsn_violations ?? 0);

/**
 * The scenarios `names` (every one unless OUTBOX_TAIL_FAULTS_ONLY=a,b narrows them: a CI matrix entry on another
 * PostgreSQL), each under a steady writer on the file's fault stack, one after the other. A file none of whose
 * scenarios is selected fails, naming the file that holds them.
 */
export function scenarioSuite(label: string, names: readonly string[]): void {
  const only = process.env.OUTBOX_TAIL_FAULTS_ONLY?.split(',').filter(Boolean);
  for (const name of only ?? []) if (!SCENARIOS.some((s) => s.name === name)) throw new Error(`OUTBOX_TAIL_FAULTS_ONLY: unknown scenario ${name}`);
  const selected = SCENARIOS.filter((s) => names.includes(s.name) && (!only || only.includes(s.name)));
  if (selected.length === 0)
    throw new Error(
      `OUTBOX_TAIL_FAULTS_ONLY=${only?.join(',')} selects none of this file's scenarios (${names.join(', ')}): run only the fault files that hold the scenarios it names (SLOT_SCENARIOS are in faults-slot.test.ts, the rest in faults.test.ts)`,
    );
  const stack = useFaultStack(label);
  describe(`fault scenarios (${label}): each under a steady writer, invariants I1-I12 that apply, with counts`, () => {
    for (const s of selected) {
      it(`${s.name}: ${s.title}`, async () => {
        const r = report(await s.run({ fs: stack.fs, log }));
        expect(r.failed, r.detail).toEqual([]);
        expect({ passed: r.passed, lost: r.lost, phantoms: r.phantoms }).toEqual({ passed: true, lost: 0, phantoms: 0 });
      }, 600_000);
    }
  });
}
