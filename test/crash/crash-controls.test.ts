import { describe, expect, it } from 'vitest';
import { crashRunner, NO_PERIODIC_CONFIRM } from './crash-runner.js';

// The crash test's negative controls: each broken design is caught by the recount, every run.
const run = crashRunner();

describe('negative controls: the recount catches each broken design, every run', () => {
  it("(1) the article's naive writer (commit, then send), killed right after a commit, loses events", async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 0, seed: 11, writerMode: 'naive', consumerMode: 'none' });
    // Each kill lands right after a COMMIT, inside the writer's 20 ms before its send; a slow machine can let
    // a send slip out before the kill, so the claim is "loses at least one", not one per kill.
    expect(r.relay_kills).toBe(5);
    expect(r.lost).toBeGreaterThan(0);
    expect(r.lost).toBeLessThanOrEqual(r.relay_kills);
    expect(r.passed).toBe(false);
  });

  it('(2) a relay that confirms on receipt loses what it had not published when killed', async () => {
    // Records wait 2 s to be batched: every kill (0.3-0.7 s apart) lands while some are received but unpublished.
    const r = await run({
      orders: 200,
      kills: 5,
      consumerKills: 0,
      seed: 13,
      consumerMode: 'none',
      relayVariant: 'confirm-on-receipt',
      relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' },
    });
    expect(r.lost).toBeGreaterThan(0);
    expect(r.passed).toBe(false);
  });

  it('(2, control) the correct relay under the same conditions loses nothing', async () => {
    const r = await run({ orders: 200, kills: 5, consumerKills: 0, seed: 13, consumerMode: 'none', relayEnv: { OUTBOX_TAIL_BATCH_MAX_WAIT_MS: '2000' } });
    expect(r.lost).toBe(0);
    expect(r.distinct_ids).toBe(r.orders);
  });

  it('(4) a consumer without the processed-messages table ships orders twice', async () => {
    const r = await run({ orders: 150, kills: 4, consumerKills: 1, seed: 19, consumerMode: 'naive', relayEnv: NO_PERIODIC_CONFIRM });
    expect(r.duplicates).toBeGreaterThan(0);
    expect(r.shipments).toBeGreaterThan(r.orders);
    expect(r.passed).toBe(false);
  });
});
