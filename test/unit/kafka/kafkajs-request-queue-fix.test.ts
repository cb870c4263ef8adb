import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * In a process of its own (the fix changes kafkajs's RequestQueue prototype): an
 * idle request queue after one response, timers counted for 200 ms, warnings caught.
 */
function idleQueue(fixed: boolean): { timers: number; warnings: string[]; pendingSent: boolean } {
  const script = `
    import { createRequire } from 'node:module';
    ${fixed ? "import { installRequestQueueFix } from './src/kafka/kafkajs/kafkajs-request-queue-fix.ts'; if (!installRequestQueueFix()) throw new Error('not installed');" : ''}
    const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js');
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.name));
    let timers = 0;
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = (fn, ms, ...a) => { timers++; return realSetTimeout(fn, ms, ...a); };
    const noop = () => {};
    const logger = { debug: noop, info: noop, warn: noop, error: noop };
    const q = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30000, enforceRequestTimeout: false, clientId: 't', broker: 'b', logger });
    q.checkPendingRequests(); // what kafkajs does after every response
    await new Promise((r) => realSetTimeout(r, 200));
    const idleTimers = timers;
    // A request that must wait (one already in flight) is still sent once the first one is done.
    let sent = 0;
    q.sendSocketRequest = () => { sent++; };
    q.inflight.set(1, {});
    q.pending.push({ correlationId: 2 });
    q.scheduleCheckPendingRequests();
    q.inflight.clear();
    await new Promise((r) => realSetTimeout(r, 50));
    q.destroy();
    console.log(JSON.stringify({ timers: idleTimers, warnings, pendingSent: sent === 1 }));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { timers: number; warnings: string[]; pendingSent: boolean };
}

describe("kafkajs's request queue timer", () => {
  it('kafkajs 2.2.4 as shipped spins a 1 ms timer on an idle connection and Node warns of a negative timeout', () => {
    const r = idleQueue(false);
    expect(r.timers).toBeGreaterThan(20);
    expect(r.warnings).toContain('TimeoutNegativeWarning');
  });

  it('with the fix an idle connection schedules nothing and nothing warns, and a pending request is still sent', () => {
    const r = idleQueue(true);
    expect(r.timers).toBe(0);
    expect(r.warnings).toEqual([]);
    expect(r.pendingSent).toBe(true);
  });
});
