/**
 * Issue 12 item 5: the relay IMAGE runs for real, against containerised
 * PostgreSQL and Kafka (support/netns-stack.ts: one network namespace, so
 * 127.0.0.1 is right everywhere). One pass over what an SRE relies on:
 *
 *   - `init` from the image creates the table, publication and slot (exit 0);
 *   - `run` streams, and rows written while it runs reach Kafka;
 *   - the image's own HEALTHCHECK command answers 0, and so does the engine
 *     (Podman: `podman healthcheck run`; Docker: State.Health = healthy);
 *   - every process in the container runs as a non-root uid;
 *   - `stop` (SIGTERM, 45 s before the engine kills) while rows are being
 *     written: the relay drains (logs `drained` then `stopped`) and exits 0,
 *     everything at or below the slot's confirmed LSN is in Kafka, and a new
 *     container of the same image delivers the rest: distinct ids in Kafka =
 *     rows written, no id that was not written.
 *
 * A relay image whose entrypoint ignores SIGTERM (a shell as PID 1) fails the
 * exit-code check: the engine kills it after 45 s (137).
 *
 * Run: npm run test:containers (bin/with-engine.sh --images 'relay systemd' vitest run --project containers)
 * (OUTBOX_TAIL_TC_RELAY_IMAGE selects the image, default outbox-tail:test).
 */
import { Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { removeOwnContainers } from './support/cleanup.js';
import { containerLogs, inspectContainer, removeContainer, startNetnsStack, type NetnsStack } from './support/netns-stack.js';
import { isPrivatePodmanEngine, podmanOk } from './support/podman.js';
import { relayEnv, relayImage, startRelayContainer, type StartedRelay } from './support/relay-container.js';
import { confirmedFlushLsn, OutboxWriter } from './support/writer.js';

/** As README (Running in a container) and the unit's TimeoutStopSec: > the 30 s drain. */
const STOP_TIMEOUT_MS = 45_000;
const SLOT = 'containers_relay';
const AGGREGATE = 'order';
const TOPIC = `outbox.event.${AGGREGATE}`;

function report(line: string): void {
  process.stdout.write(`[relay-image] ${line}\n`);
}

describe(`relay image ${relayImage()}`, () => {
  let stack: NetnsStack | undefined;
  let writer: OutboxWriter | undefined;
  let collector: KafkaCollector | undefined;

  beforeAll(async () => {
    stack = await startNetnsStack();
    report(`postgres + kafka containers ready in ${stack.startedInMs} ms`);
  });

  afterAll(async () => {
    await writer?.close();
    await collector?.stop();
    // Relay containers (joined to the stack's namespace) first, then the stack.
    const left = await removeOwnContainers((l) => report(l));
    expect(left, 'containers left behind').toEqual([]);
  });

  it('inits, relays, answers its health check as non-root, drains on SIGTERM and exits 0 with nothing lost', async () => {
    const s = stack!;
    const env = relayEnv(s, SLOT, { OUTBOX_TAIL_CREATE_SLOT: 'false' });

    // init: migrations, publication and the slot, from the image itself.
    const init = await startRelayContainer(s, { command: ['init'], env, waitStrategy: Wait.forOneShotStartup() });
    const initState = await inspectContainer(init.container.getId());
    // A one-shot container can exit before the follow stream attached: read its log from the engine.
    init.logs.replace(await containerLogs(init.container.getId()));
    expect(initState.exitCode, init.logs.lines.join('\n')).toBe(0);
    expect(init.logs.lines.join('\n')).toMatch(new RegExp(`slot ${SLOT} created`));
    await removeContainer(init.container.getId());
    report(`init exited 0 in ${init.startMs} ms`);

    writer = await new OutboxWriter(s.host.databaseUrl, AGGREGATE).connect();
    collector = await new KafkaCollector(s.host.brokers).start([TOPIC]);

    // run: streaming.
    const tRun = Date.now();
    let relay: StartedRelay = await startRelayContainer(s, { command: ['run'], env });
    await relay.logs.waitForEvent('streaming', 60_000);
    report(`relay container: first log line after ${relay.startMs} ms, streaming after ${Date.now() - tRun} ms`);

    // Rows written while it runs.
    const t1 = Date.now();
    await writer.write(200, 10);
    await collector.waitForDistinct(200, 60_000);
    report(`200 rows written while running reached Kafka in ${Date.now() - t1} ms`);

    // HEALTHCHECK: the image's command, run inside, then the engine's own view.
    const state = await inspectContainer(relay.container.getId());
    expect(state.healthcheck, 'image has a HEALTHCHECK (built with --format docker?)').toEqual(['CMD', 'node', '/app/docker/healthcheck.mjs']);
    const hc = await relay.container.exec(state.healthcheck!.slice(1));
    expect(hc.exitCode, hc.output).toBe(0);
    const tHealth = Date.now();
    if (isPrivatePodmanEngine()) {
      // No systemd on our machines: Podman cannot schedule the checks, but runs one on demand.
      const stdout = await podmanOk(['healthcheck', 'run', relay.container.getId()]);
      expect(stdout.trim()).toMatch(/^(healthy)?$/);
      expect((await inspectContainer(relay.container.getId())).health).toBe('healthy');
    } else {
      // Docker schedules it: --interval=15s, the first result after at most one interval.
      for (;;) {
        const h = (await inspectContainer(relay.container.getId())).health;
        if (h === 'healthy') break;
        if (Date.now() - tHealth > 60_000) throw new Error(`State.Health.Status is ${h} after 60 s`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    report(`health check healthy (engine: ${process.env.OUTBOX_TAIL_CONTAINER_ENGINE ?? 'docker'}), ${Date.now() - tHealth} ms`);

    // Non-root: the exec user and every process of the container.
    const id = await relay.container.exec(['id', '-u']);
    expect(id.output.trim()).not.toBe('0');
    const procs = await relay.container.exec([
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do u=$(awk \'/^Uid:/ {print $2}\' $p/status 2>/dev/null) && echo "$u $(tr "\\0" " " < $p/cmdline 2>/dev/null)"; done',
    ]);
    const lines = procs.output.trim().split('\n').filter(Boolean);
    const node = lines.find((l) => /node \/app\/bin\/outbox-tail\.js run/.test(l) && !/^\S+ sh /.test(l));
    expect(node, procs.output).toBeDefined();
    for (const l of lines) expect(l, procs.output).not.toMatch(/^0 /);
    const shown = lines.filter((l) => !l.includes('/proc/[0-9]')).map((l) => l.trim());
    report(`exec uid ${id.output.trim()}; processes (uid cmdline): ${shown.join(' | ')}`);

    // SIGTERM while rows are being written.
    writer.startBackground(20, 5);
    await collector.waitForDistinct(400, 60_000);
    const writtenAtStop = writer.rows.length;
    const tStop = Date.now();
    await relay.container.stop({ timeout: STOP_TIMEOUT_MS, remove: false });
    const drainMs = Date.now() - tStop;
    await writer.stopBackground();
    const stopped = await inspectContainer(relay.container.getId());
    relay.logs.replace(await containerLogs(relay.container.getId()));
    const events = relay.logs.events();
    report(
      `stop: exit ${stopped.exitCode} after ${drainMs} ms (rows written when SIGTERM was sent: ${writtenAtStop}); log events ${[...new Set(events)].join(',')}`,
    );
    expect(stopped.running).toBe(false);
    expect(stopped.exitCode, relay.logs.lines.slice(-20).join('\n')).toBe(0);
    expect(events).toContain('shutdown');
    expect(events).toContain('drained');
    expect(events).toContain('stopped');
    expect(events).not.toContain('shutdown-timeout');
    expect(drainMs).toBeLessThan(STOP_TIMEOUT_MS - 5_000);

    // What the slot confirmed is in Kafka.
    await new Promise((r) => setTimeout(r, 1000)); // the collector's last fetch
    const confirmed = await confirmedFlushLsn(s.host.databaseUrl, SLOT);
    expect(confirmed).not.toBeNull();
    const seen = collector.distinctIds();
    const confirmedRows = writer.rows.filter((r) => r.lsnAfterCommit <= confirmed!);
    const missing = confirmedRows.filter((r) => !seen.has(r.id));
    report(
      `confirmed_flush_lsn ${Lsn.format(confirmed!)}: ${confirmedRows.length} rows at or below it, ${missing.length} missing in Kafka; ${seen.size} of ${writer.rows.length} rows in Kafka after the stop`,
    );
    expect(missing.map((r) => r.id)).toEqual([]);
    await removeContainer(relay.container.getId());

    // A new container of the image delivers the rest: nothing lost.
    const inKafkaBefore = seen.size;
    const tReplay = Date.now();
    relay = await startRelayContainer(s, { command: ['run'], env });
    await collector.waitForDistinct(writer.rows.length, 60_000);
    report(
      `second container: ${writer.rows.length - inKafkaBefore} rows left in the slot, all ${writer.rows.length} rows in Kafka ${Date.now() - tReplay} ms after its start`,
    );
    const written = writer.ids();
    expect(seen.size).toBe(written.size);
    expect([...seen].filter((x) => !written.has(x))).toEqual([]);
    const tStop2 = Date.now();
    await relay.container.stop({ timeout: STOP_TIMEOUT_MS, remove: false });
    const second = await inspectContainer(relay.container.getId());
    relay.logs.replace(await containerLogs(relay.container.getId()));
    expect(relay.logs.events()).toContain('drained');
    report(
      `second stop: exit ${second.exitCode} after ${Date.now() - tStop2} ms; ${collector.records.length} records, ${seen.size} distinct ids = ${written.size} rows written`,
    );
    expect(second.exitCode, relay.logs.lines.slice(-20).join('\n')).toBe(0);
    await removeContainer(relay.container.getId());
  });
});
