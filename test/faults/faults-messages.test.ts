/**
 * The table-less outbox under the faults (issue 14): events written as logical
 * decoding messages (outbox_tail.emit and writeOutboxEvent via message,
 * rolled-back transactions and savepoints), relays on --source messages, the
 * recount from the event ids the order rows committed with. A subset here
 * (kafka-kill once, the 100,000-message transaction) and one negative control;
 * `npm run faults -- --source messages` runs all of MESSAGE_SCENARIOS (or
 * OUTBOX_TAIL_FAULTS_MESSAGES=all here). A fault stack of this file's own.
 */
import { describe, expect, it } from 'vitest';
import { MESSAGE_SCENARIOS, scenario } from './scenarios.js';
import { log, report, useFaultStack } from './fault-suite.js';

const stack = useFaultStack('messages');
const MESSAGES_RUNS: Array<{ name: string; quick: boolean }> =
  process.env.OUTBOX_TAIL_FAULTS_MESSAGES === 'all'
    ? MESSAGE_SCENARIOS.map((name) => ({ name, quick: false }))
    : [
        { name: 'kafka-kill', quick: true },
        { name: 'big-transaction', quick: false },
      ];

describe('fault scenarios with events as messages (--source messages): lost = 0, phantoms = 0', () => {
  for (const { name, quick } of MESSAGES_RUNS) {
    it(`messages ${name}: ${scenario(name).title.split(':')[0]}${quick ? ' (once)' : ''}`, async () => {
      const r = report(await scenario(name).run({ fs: stack.fs, log, source: 'messages', quick }));
      expect(r.failed, r.detail).toEqual([]);
      expect({ passed: r.passed, lost: r.lost, phantoms: r.phantoms }).toEqual({ passed: true, lost: 0, phantoms: 0 });
      expect(r.counts?.committed ?? 0).toBeGreaterThan(0);
    }, 600_000);
  }

  it('negative control: kafka-kill with events as messages catches a relay that confirms on receipt (I1 / I7)', async () => {
    const r = report(await scenario('kafka-kill').run({ fs: stack.fs, log, source: 'messages', variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(r.lost + (r.counts?.lsn_violations ?? 0)).toBeGreaterThan(0);
  }, 300_000);
});
