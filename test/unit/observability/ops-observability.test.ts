import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { RelayObservability } from '../../../src/observability/observability.js';
import { RelayStats } from '../../../src/pipeline/relay-stats.js';
import { captureLogs as capture } from '../../support/log-capture.js';

// The slot monitor polls a PostgreSQL that is not there (port 1): its failures are logged, never thrown.
const config = (metricsListen: string) => ({
  ...resolveConfig({ flags: { slot: 'ops_unit', databaseUrl: 'postgres://u@127.0.0.1:1/db', metricsListen, connectTimeoutMs: 200 } }),
  slot: 'ops_unit',
});

describe('RelayObservability', () => {
  let blocker: Server | undefined;
  let obs: RelayObservability | undefined;
  afterEach(async () => {
    await obs?.stop();
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
    blocker = undefined;
  });

  it('serves health from the relay state: a standby is alive but not ready, a stopped relay is unhealthy', async () => {
    const { logger, lines } = capture();
    const stats = new RelayStats();
    obs = new RelayObservability(config('127.0.0.1:0'), logger);
    await obs.start(stats);
    const base = `http://${obs.server!.address}`;
    expect(lines.find((l) => l.event === 'metrics-listening')).toMatchObject({ component: 'observability', slot: 'ops_unit' });
    expect((await fetch(`${base}/readyz`)).status).toBe(503); // starting
    stats.state = 'streaming';
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    stats.state = 'standby';
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'not ready', state: 'standby', reason: 'standby: another relay holds the slot' });
    stats.state = 'stopped';
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
    await obs.stop();
    // the poller could not reach PostgreSQL: counted and logged, not thrown
    expect(await obs.registry.getSingleMetricAsString('outbox_tail_slot_poll_errors_total')).toMatch(/outbox_tail_slot_poll_errors_total [1-9]/);
    expect(lines.find((l) => l.event === 'slot-poll-failed')).toMatchObject({ level: 'warn', component: 'slot-monitor' });
  });

  it('keeps relaying when the metrics address is taken, and says so', async () => {
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const { logger, lines } = capture();
    obs = new RelayObservability(config(`127.0.0.1:${port}`), logger);
    await obs.start(new RelayStats());
    expect(obs.server).toBeNull();
    expect(lines.find((l) => l.event === 'metrics-unavailable')).toMatchObject({ level: 'error', code: 'METRICS_LISTEN_FAILED', err: 'EADDRINUSE' });
  });

  it('off disables the endpoint', async () => {
    const off = capture();
    obs = new RelayObservability(config('off'), off.logger);
    await obs.start(new RelayStats());
    expect(obs.server).toBeNull();
    expect(off.lines.find((l) => l.event === 'metrics-off')).toBeDefined();
  });
});
