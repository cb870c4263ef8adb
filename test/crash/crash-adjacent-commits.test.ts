/**
 * The adjacent-commit negative control of the crash test (docs/architecture.md#lsn-rules, rule 2):
 * at each kill T2 is open, T1 commits and is confirmed, the relay is killed, T2 commits. A relay that
 * confirms T1's end LSN + 1 skips T2 when T2's commit record starts exactly at T1's end; the correct
 * relay delivers it. That shape needs a WAL in which nothing else lands between the two commits, so
 * this file runs on a stack of its own (the shared server carries the WAL of every other test file
 * running beside it), and a witness slot checks each straddle (the harness repeats straddles until
 * `kills` of them had adjacent commits). The claims are "the broken relay loses every straddled
 * transaction with adjacent commits, and nothing else", "the correct relay loses none".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import { formatResult, runCrash, type CrashOptions } from './crash-harness.js';

let stack: StackHandle;
beforeAll(async () => {
  stack = await startStack({ log: (l) => console.log(`[stack] ${l}`) });
  console.log(`stack: ${stack.provider} postgres=${stack.versions.postgres} kafka=${stack.versions.kafka} (adjacent commits, a stack of its own)`);
}, 180_000);
afterAll(async () => {
  await stack?.stop();
});

const run = (options: Omit<CrashOptions, 'stack' | 'log'>) =>
  runCrash({ stack, log: (line) => console.log(line), ...options }).then((result) => {
    console.log(formatResult(result));
    return result;
  });

for (const source of ['table', 'messages'] as const) {
  describe(`adjacent commits across kills, events ${source === 'table' ? 'as outbox rows' : 'as messages'}`, () => {
    const conditions = { orders: 100, kills: 3, consumerKills: 0, seed: 17, consumerMode: 'none', straddle: true, source } as const;

    it('(3) a relay that confirms the commit end LSN + 1 loses each transaction whose commit starts at the confirmed one’s end', async () => {
      const r = await run({ ...conditions, relayVariant: 'confirm-end-plus-one' });
      // The witness slot saw straddles with adjacent commits (the hazard really occurred) ...
      expect(r.straddles.adjacent).toBeGreaterThan(0);
      // ... and the broken relay lost every one of those transactions; nothing but a straddled T2 can be lost.
      expect(r.lost).toBeGreaterThanOrEqual(r.straddles.adjacent);
      expect(r.lost).toBeLessThanOrEqual(r.straddles.attempted);
    });

    it('(3, control) the correct relay delivers every straddled transaction, adjacent commits included', async () => {
      const r = await run(conditions);
      expect(r.straddles.adjacent).toBeGreaterThan(0);
      expect(r.lost).toBe(0);
      expect(r.phantoms).toBe(0);
    });
  });
}
