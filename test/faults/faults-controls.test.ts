/**
 * The fault suite's negative controls: the scenarios of faults.test.ts against
 * deliberately broken relays must fail, and fail on the check that names the
 * claim, so a pass there means something. A fault stack of this file's own.
 */
import { describe, expect, it } from 'vitest';
import { scenario, twoActiveRelays } from './scenarios.js';
import { log, report, unsafe, useFaultStack } from './fault-suite.js';

const stack = useFaultStack('negative controls');

describe('negative controls: the same checks catch a broken relay', () => {
  it('kafka-kill catches a relay that confirms on receipt (I1 loss / I7 confirmed before Kafka appended)', async () => {
    const r = report(await scenario('kafka-kill').run({ fs: stack.fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('postgres-restart catches a relay that confirms on receipt (I1 / I7)', async () => {
    const r = report(await scenario('postgres-restart').run({ fs: stack.fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('network-cut catches a relay that confirms on receipt during the Kafka black hole (I1 / I7)', async () => {
    const r = report(await scenario('network-cut').run({ fs: stack.fs, log, variant: 'confirm-on-receipt', quick: true }));
    expect(r.passed).toBe(false);
    expect(unsafe(r)).toBeGreaterThan(0);
  }, 300_000);

  it('idle-outbox-wal catches a relay that never confirms keepalives (I9: the slot holds all the WAL)', async () => {
    const r = report(await scenario('idle-outbox-wal').run({ fs: stack.fs, log, variant: 'no-keepalive-confirm', quick: true }));
    expect(r.passed).toBe(false);
    expect(r.failed.some((f) => f.startsWith('I9 the relay kept confirming'))).toBe(true);
  }, 300_000);

  it('slot-recover catches a recovery that recreates the slot without the backfill from the table (I1 loss)', async () => {
    const r = report(await scenario('slot-recover').run({ fs: stack.fs, log, variant: 'recover-without-backfill' }));
    expect(r.passed).toBe(false);
    // At least the transaction held open across the invalidation: it commits before the new slot's consistent point.
    expect(r.lost).toBeGreaterThan(0);
  }, 300_000);

  it('pg-password-rotation catches a relay that read its password once (it cannot log in again: loss)', async () => {
    const r = report(await scenario('pg-password-rotation').run({ fs: stack.fs, log, variant: 'password-read-once', quick: true }));
    expect(r.passed).toBe(false);
    expect(r.lost, 'a relay that cannot log in again loses at least one committed row').toBeGreaterThan(0);
  }, 300_000);

  it('standby-takeover’s interleaving check catches two relays publishing at once', async () => {
    const { drops, duplicates } = await twoActiveRelays({ fs: stack.fs, log });
    console.log(`two active relays: commit_lsn went back ${drops} times, ${duplicates} duplicates`);
    // standby-takeover allows one drop per takeover.
    expect(drops).toBeGreaterThan(3);
    expect(duplicates).toBeGreaterThan(0);
  }, 300_000);
});
