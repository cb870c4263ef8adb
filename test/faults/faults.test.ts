/**
 * The fault suite (issue 7) in vitest: every scenario of scenarios.ts on one
 * stack of its own (the scenarios kill, pause and cut its servers), one after
 * the other, then the negative controls: the same scenarios against
 * deliberately broken relays must fail, so a pass means something.
 * `npm run faults` runs the same scenarios from the command line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultStack, type FaultStack } from './fault-stack.js';
import type { ScenarioResult } from './harness.js';
import { SCENARIOS, scenario, twoActiveRelays } from './scenarios.js';

let fs: FaultStack;
const log = (line: string) => console.log(line);

beforeAll(async () => {
  fs = await startFaultStack({ log: (l) => console.log(`[stack] ${l}`) });
  const { provider, versions, images } = fs.stack;
  console.log(
    `stack: ${provider} postgres=${versions.postgres} kafka=${versions.kafka}${images ? ` images=${images.postgres},${images.kafka}` : ''} (faults project)`,
  );
}, 180_000);

afterAll(async () => {
  await fs?.stop();
});

function report(r: ScenarioResult): ScenarioResult {
  console.log(
    `${r.name}: ${r.passed ? 'PASS' : 'FAIL'} in ${r.seconds} s: lost ${r.lost}, duplicates ${r.duplicates}, phantoms ${r.phantoms}, recovery ${r.recovery_seconds} s\n  ${r.detail}`,
  );
  return r;
}

describe('fault scenarios: each under a steady writer, invariants I1-I12 that apply, with counts', () => {
  for (const s of SCENARIOS) {
    it(`${s.name}: ${s.title}`, async () => {
      const r = report(await s.run({ fs, log }));
      expect(r.failed, r.detail).toEqual([]);
      expect({ passed: r.passed, lost: r.lost, phantoms: r.phantoms }).toEqual({ passed: true, lost: 0, phantoms: 0 });
    }, 600_000);
  }
});

describe('negative controls: the same checks catch a broken relay', () => {
  // A relay that confirms on receipt either loses what it confirmed and then dropped (I1), or
  // publishes it after the slot had passed it (I7): which one depends on when the fault hits.
  const unsafe = (r: ScenarioResult) => r.lost + (r.counts?.lsn_violations ?? 0);

  it('kafka-kill catches a relay that confirms on receipt (I1 loss / I7 confirmed before Kafka appended)', async () => {
    const r = report(await scenario('kafka-kill').run({ fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('postgres-restart catches a relay that confirms on receipt (I1 / I7)', async () => {
    const r = report(await scenario('postgres-restart').run({ fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('network-cut catches a relay that confirms on receipt during the Kafka black hole (I1 / I7)', async () => {
    const r = report(await scenario('network-cut').run({ fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('idle-outbox-wal catches a relay that never confirms keepalives (I9: the slot holds all the WAL)', async () => {
    const r = report(await scenario('idle-outbox-wal').run({ fs, log, variant: 'no-keepalive-confirm', quick: true }));
    expect(r.passed).toBe(false);
    expect(r.failed.some((f) => f.startsWith('I9 the relay kept confirming'))).toBe(true);
  }, 300_000);

  it('standby-takeover’s interleaving check catches two relays publishing at once', async () => {
    const { drops, duplicates } = await twoActiveRelays({ fs, log });
    console.log(`two active relays: commit_lsn went back ${drops} times, ${duplicates} duplicates`);
    // standby-takeover allows one drop per takeover.
    expect(drops).toBeGreaterThan(3);
    expect(duplicates).toBeGreaterThan(0);
  }, 300_000);
});
