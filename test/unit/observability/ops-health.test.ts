import { Registry, Counter } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopback, parseListen, startMetricsServer, type HealthReport, type MetricsServer } from '../../../src/observability/metrics-server.js';
import { StallDetector } from '../../../src/observability/stall-detector.js';
import { Lsn } from '../../../src/shared/lsn.js';

describe('StallDetector', () => {
  const T = 60_000;

  it('is not stalled while the relay confirms, however much lag there is', () => {
    const d = new StallDetector(T, 0);
    let lsn = 100n;
    for (let t = 0; t <= 10 * T; t += 10_000) {
      lsn += 10n;
      expect(d.update({ now: t, state: 'streaming', confirmedLsn: Lsn.of(lsn), lagBytes: 1_000_000 + t }).stalled).toBe(false);
    }
  });

  it('is not stalled on an idle database: nothing confirmed, lag constant', () => {
    const d = new StallDetector(T, 0);
    for (let t = 0; t <= 10 * T; t += 10_000) expect(d.update({ now: t, state: 'streaming', confirmedLsn: Lsn.of(100n), lagBytes: 56 }).stalled).toBe(false);
  });

  it('stalls when the lag grows with no confirm for the timeout, says why, and clears on the next confirm', () => {
    const d = new StallDetector(T, 0);
    expect(d.update({ now: 0, state: 'streaming', confirmedLsn: Lsn.of(100n), lagBytes: 1000 }).stalled).toBe(false);
    expect(d.update({ now: T - 1, state: 'reconnecting', confirmedLsn: Lsn.of(100n), lagBytes: 5000 }).stalled).toBe(false);
    const v = d.update({ now: T, state: 'reconnecting', confirmedLsn: Lsn.of(100n), lagBytes: 9000 });
    expect(v).toMatchObject({ stalled: true, changed: true });
    expect(v.reason).toMatch(/no confirm for 60 s while the slot lag grew from 1000 to 9000 bytes \(state reconnecting\)/);
    expect(d.update({ now: T + 1, state: 'reconnecting', confirmedLsn: Lsn.of(100n), lagBytes: 9500 })).toMatchObject({ stalled: true, changed: false });
    // lag unknown (poll failed): the verdict stays
    expect(d.update({ now: T + 2, state: 'reconnecting', confirmedLsn: Lsn.of(100n), lagBytes: null }).stalled).toBe(true);
    expect(d.update({ now: T + 3, state: 'streaming', confirmedLsn: Lsn.of(200n), lagBytes: 9500 })).toMatchObject({
      stalled: false,
      changed: true,
      reason: null,
    });
  });

  it('never calls a standby stalled', () => {
    const d = new StallDetector(T, 0);
    d.update({ now: 0, state: 'standby', confirmedLsn: Lsn.of(0n), lagBytes: 10 });
    expect(d.update({ now: 5 * T, state: 'standby', confirmedLsn: Lsn.of(0n), lagBytes: 10_000_000 }).stalled).toBe(false);
  });
});

describe('metrics server', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('parses listen addresses and knows loopback', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(() => parseListen('9464')).toThrow(/host:port/);
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
  });

  it('serves /metrics, /healthz and /readyz with status codes that follow the health report', async () => {
    const registry = new Registry();
    new Counter({ name: 'outbox_tail_test_total', help: 'test', registers: [registry] }).inc(3);
    let report: HealthReport = { healthy: true, ready: true, state: 'streaming', reason: null };
    server = await startMetricsServer({ listen: '127.0.0.1:0', registry, health: () => report });
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const base = `http://${server.address}`;

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('outbox_tail_test_total 3');

    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    report = { healthy: true, ready: false, state: 'standby', reason: 'standby: another relay holds the slot' };
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: 'not ready', state: 'standby', reason: 'standby: another relay holds the slot' });

    report = { healthy: false, ready: false, state: 'reconnecting', reason: 'no confirm for 120 s' };
    const unhealthy = await fetch(`${base}/healthz`);
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toMatchObject({ status: 'unhealthy', reason: 'no confirm for 120 s' });

    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405);
  });

  it('fails to start on a port in use, with the address in the error', async () => {
    server = await startMetricsServer({
      listen: '127.0.0.1:0',
      registry: new Registry(),
      health: () => ({ healthy: true, ready: true, state: 'streaming', reason: null }),
    });
    await expect(
      startMetricsServer({ listen: server.address, registry: new Registry(), health: () => ({ healthy: true, ready: true, state: 'x', reason: null }) }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
