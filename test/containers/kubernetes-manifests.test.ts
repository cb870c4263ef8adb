/**
 * Issue 26 item 5: deploy/kubernetes/ runs, under `podman kube play`, as the
 * active/standby pair it describes, against containerised PostgreSQL and
 * Kafka (support/netns-stack.ts), from our relay image:
 *
 *   - the pods start from the manifests' ConfigMap (env), Secret (a file under
 *     /run/secrets/outbox-tail), securityContext and resource limits;
 *   - the first relay streams: rows written reach Kafka, /readyz answers 200;
 *   - the second waits on the slot: /healthz 200, /readyz 503 `standby`;
 *   - the active pod's container is killed (SIGKILL) while rows are written:
 *     the standby takes over (/readyz 200, log `takeover`), and the recount
 *     finds every row written in Kafka (0 lost), nothing else (0 phantoms),
 *     per-key order kept (the crash suite's rule), the slot confirmed to the end.
 *
 * What kube play cannot do (docs/kubernetes.md): it has no scheduler, no
 * Services, PodDisruptionBudgets or ServiceMonitors, and in 4.3 no readiness
 * gating; liveness becomes a healthcheck that needs systemd to be scheduled.
 * So each role is its own rendered Deployment (replicas 1), pods share the
 * host's network (--network host; the metrics port is moved to a free
 * 127.0.0.1 port per role), and the test asks /healthz and /readyz itself.
 *
 * Negative control: OUTBOX_TAIL_TEST_K8S_BROKEN=standby-own-slot renders the second pod
 * on a slot of its own (a per-shard copy with the wrong slot, or --create-slot on a
 * fresh name): it streams instead of waiting, and the test fails at "relay b live and
 * not ready".
 *
 * Run: bin/with-engine.sh --images 'relay' npx vitest run --project containers test/containers/kubernetes-manifests.test.ts
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Wait } from 'testcontainers';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev/stack/process.js';
import { Lsn } from '../../src/shared/lsn.js';
import { countOrderViolations } from '../crash/crash-harness.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { loadManifests, only, type K8sObject } from '../support/kubernetes-manifests.js';
import { tempDir } from '../support/temp-dir.js';
import { removeOwnContainers } from './support/cleanup.js';
import { containerLogs, inspectContainer, removeContainer, startNetnsStack, type NetnsStack } from './support/netns-stack.js';
import { hierarchiesWithPodParent, kubePlay, removePodCgroups, type KubePlay } from './support/kube-play.js';
import { podman, podmanOk } from './support/podman.js';
import { relayEnv, relayImage, startRelayContainer } from './support/relay-container.js';
import { confirmedFlushLsn, OutboxWriter } from './support/writer.js';

const SLOT = 'kube_relay';
const AGGREGATE = 'order';
const TOPIC = `outbox.event.${AGGREGATE}`;
/** The two pods of the pair, one rendered Deployment each: `a` starts first and is the active one. */
type Role = 'a' | 'b';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function report(line: string): void {
  process.stdout.write(`[kubernetes] ${line}\n`);
}

interface Health {
  status: number;
  body: Record<string, unknown>;
}

async function probe(port: number, path: '/healthz' | '/readyz'): Promise<Health | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return null; // not listening (yet, or the container is restarting)
  }
}

async function waitFor<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined | null | false>, context?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${context ? `\n${await context()}` : ''}`);
    await sleep(250);
  }
}

/** VmRSS/VmHWM (MB) of the node process under the container's tini. */
function relayMemory(tiniPid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const children = readFileSync(`/proc/${tiniPid}/task/${tiniPid}/children`, 'utf8').trim().split(/\s+/);
    const status = readFileSync(`/proc/${children[0]}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: Math.round(kb('VmRSS') / 1024), hwmMb: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return null;
  }
}

describe(`deploy/kubernetes under podman kube play, image ${relayImage()}`, () => {
  const dir = tempDir('outbox-tail-kube-');
  const suffix = `kt${process.pid}`;
  const files: string[] = [];
  let kube: KubePlay | undefined;
  let stack: NetnsStack | undefined;
  let writer: OutboxWriter | undefined;
  let collector: KafkaCollector | undefined;
  const cgroupParentsBefore = hierarchiesWithPodParent();

  beforeAll(async () => {
    kube = kubePlay(dir);
    stack = await startNetnsStack();
    report(`postgres + kafka containers ready in ${stack.startedInMs} ms`);
  });

  afterAll(async () => {
    await writer?.close();
    await collector?.stop();
    const ids = await kube?.podman(['pod', 'ps', '-q', '--no-trunc', '--filter', `name=${suffix}`]);
    const podIds = (ids?.stdout ?? '').split('\n').filter(Boolean);
    for (const f of files.reverse()) {
      report(`kube down ${f.split('/').pop()}: ${(await kube!.down(f)).replace(/\s+/g, ' ')}`);
    }
    const left = await removeOwnContainers((l) => report(l));
    const pods = await podman(['pod', 'ps', '-q', '--filter', `name=${suffix}`]);
    const cgroupsLeft = removePodCgroups(podIds, cgroupParentsBefore);
    expect(left, 'containers left behind').toEqual([]);
    expect(pods.stdout.trim(), 'pods left behind').toBe('');
    expect(cgroupsLeft, 'pod cgroups left behind').toEqual([]);
  });

  it('runs the pair: the active relay streams, the standby is live and not ready, takes over when the active is killed, and nothing is lost', async () => {
    const s = stack!;
    const manifests = loadManifests();
    const configMap = structuredClone(only(manifests, 'ConfigMap'));
    const secret = only(manifests, 'Secret');
    const deployment = only(manifests, 'Deployment');

    // init (the slot, publication and table), once, from the image.
    const init = await startRelayContainer(s, {
      command: ['init'],
      env: relayEnv(s, SLOT, { OUTBOX_TAIL_CREATE_SLOT: 'false' }),
      waitStrategy: Wait.forOneShotStartup(),
    });
    expect((await inspectContainer(init.container.getId())).exitCode, await containerLogs(init.container.getId())).toBe(0);
    await removeContainer(init.container.getId());

    // The manifests, rendered for this machine: the stack's addresses, this run's names.
    configMap.metadata.name = `${configMap.metadata.name}-${suffix}`;
    Object.assign(configMap.data, { OUTBOX_TAIL_SLOT: SLOT, OUTBOX_TAIL_BROKERS: s.host.brokers.join(','), OUTBOX_TAIL_STANDBY_RETRY_MS: '500' });
    // The Secret as the kubelet would project it: one file per key, root-owned, 0440, group = fsGroup.
    // (Podman 4.3 writes a Secret's `data` into the volume still base64-encoded and ignores `stringData`,
    // so the volume is rendered as a hostPath directory holding those files.)
    const podSecurity = deployment.spec.template.spec.securityContext;
    const secretMount = (deployment.spec.template.spec.containers[0].volumeMounts as K8sObject[]).find((m) => m.name === 'secrets')!;
    const secretDir = join(dir, 'secret');
    mkdirSync(secretDir, { mode: 0o750 });
    chownSync(secretDir, 0, podSecurity.fsGroup);
    const secretValues: Record<string, string> = { 'database-url': s.host.databaseUrl };
    expect(Object.keys(secretValues).sort()).toEqual(Object.keys(secret.stringData).sort());
    for (const [key, value] of Object.entries(secretValues)) {
      const file = join(secretDir, key);
      writeFileSync(file, `${value}\n`);
      chownSync(file, 0, podSecurity.fsGroup);
      chmodSync(file, deployment.spec.template.spec.volumes[0].secret.defaultMode);
    }
    const ports: Record<Role, number> = { a: await freePort(), b: await freePort() };
    const render = (role: Role): K8sObject => {
      const d = structuredClone(deployment);
      d.metadata.name = `${d.metadata.name}-${role}-${suffix}`;
      d.spec.replicas = 1;
      const pod = d.spec.template;
      const relay = pod.spec.containers[0];
      relay.image = relayImage();
      relay.envFrom[0].configMapRef.name = configMap.metadata.name;
      // One network (the host's) for both pods: a loopback port of each role's own (set in the
      // role's ConfigMap: Podman 4.3 lets envFrom win over env). Podman refuses port mappings on
      // the host network, so no `ports`, and the probes name the number.
      delete relay.ports;
      relay.livenessProbe.httpGet.port = relay.readinessProbe.httpGet.port = ports[role];
      pod.spec.volumes[0] = { name: 'secrets', hostPath: { path: secretDir, type: 'Directory' } };
      return d;
    };
    const write = (role: Role, objects: K8sObject[]) => {
      const file = join(dir, `relay-${role}.yaml`);
      writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
      files.push(file);
      return file;
    };
    const configFor = (role: Role) => {
      const c = structuredClone(configMap);
      c.data.OUTBOX_TAIL_METRICS_LISTEN = `127.0.0.1:${ports[role]}`;
      if (role === 'b' && process.env.OUTBOX_TAIL_TEST_K8S_BROKEN === 'standby-own-slot') {
        Object.assign(c.data, { OUTBOX_TAIL_SLOT: `${SLOT}_b`, OUTBOX_TAIL_CREATE_SLOT: 'true' });
      }
      return c;
    };
    const fileA = write('a', [configFor('a'), render('a')]);
    const fileB = write('b', [configFor('b'), render('b')]);
    const ctr = (role: Role) => `${deployment.metadata.name}-${role}-${suffix}-pod-0-relay`;
    const logsOf = (role: Role) => async () => {
      const r = await podman(['logs', '--tail', '30', ctr(role)]);
      return `last lines of ${ctr(role)}:\n${r.stdout}${r.stderr}`;
    };

    writer = await new OutboxWriter(s.host.databaseUrl, AGGREGATE).connect();
    collector = await new KafkaCollector(s.host.brokers).start([TOPIC]);

    // The active relay.
    const t0 = Date.now();
    await kube!.play(fileA);
    await waitFor('relay a ready (/readyz 200)', 45_000, async () => (await probe(ports.a, '/readyz'))?.status === 200, logsOf('a'));
    report(`pod a: kube play to /readyz 200 in ${Date.now() - t0} ms`);
    await writer.write(300, 10);
    await collector.waitForDistinct(300, 60_000);

    // What the pod got from the manifests: non-root, read-only root, no capabilities, the secret as a file, the memory limit.
    const checks = await podmanOk([
      'exec',
      ctr('a'),
      'sh',
      '-c',
      `id -u; grep CapEff /proc/1/status; touch /probe 2>&1; ls -ln ${secretMount.mountPath}/; env | grep -c OUTBOX_TAIL_DATABASE_URL=; cat /sys/fs/cgroup/memory/memory.limit_in_bytes`,
    ]);
    report(`inside pod a: ${checks.trim().replace(/\n/g, ' | ')}`);
    const [uid] = checks.trim().split('\n');
    expect(uid).toBe(String(deployment.spec.template.spec.securityContext.runAsUser));
    expect(checks).toMatch(/CapEff:\s+0+\n/);
    expect(checks).toMatch(/Read-only file system/);
    expect(checks).toMatch(/database-url/);
    expect(checks).toMatch(/\n0\n/); // no OUTBOX_TAIL_DATABASE_URL in the environment
    expect(checks.trim().split('\n').pop()).toBe(String(384 * 1024 * 1024));

    // The standby.
    const t1 = Date.now();
    await kube!.play(fileB);
    const standby = await waitFor(
      'relay b live and not ready',
      60_000,
      async () => {
        const [live, ready] = [await probe(ports.b, '/healthz'), await probe(ports.b, '/readyz')];
        return live?.status === 200 && ready?.status === 503 && ready.body.state === 'standby' ? ready : null;
      },
      logsOf('b'),
    );
    report(`pod b: kube play to standby in ${Date.now() - t1} ms: /healthz 200, /readyz 503 ${JSON.stringify(standby.body)}`);
    expect((await probe(ports.a, '/readyz'))?.status).toBe(200);

    // Memory: the figures the manifest's requests and limits come from.
    const pidA = Number((await podmanOk(['inspect', '--format', '{{.State.Pid}}', ctr('a')])).trim());
    const pidB = Number((await podmanOk(['inspect', '--format', '{{.State.Pid}}', ctr('b')])).trim());
    report(`relay memory: active ${JSON.stringify(relayMemory(pidA))}, standby ${JSON.stringify(relayMemory(pidB))} (MB)`);

    // SIGKILL the active pod's container while rows are written.
    writer.startBackground(5, 10);
    await collector.waitForDistinct(600, 60_000);
    const tKill = Date.now();
    await podmanOk(['kill', '--signal', 'KILL', ctr('a')]);
    const tookOver = await waitFor('relay b ready after the kill', 60_000, async () => (await probe(ports.b, '/readyz'))?.status === 200, logsOf('b'));
    const takeoverMs = Date.now() - tKill;
    await collector.waitForDistinct(writer.rows.length + 200, 60_000);
    await writer.stopBackground();
    expect(tookOver).toBe(true);
    const logsB = await containerLogs((await podmanOk(['inspect', '--format', '{{.Id}}', ctr('b')])).trim());
    expect(logsB).toMatch(/"event":"takeover"/);

    // The kubelet would restart the killed container (restartPolicy Always); Podman 4.3 left it exited
    // here, so the test restarts it: it must come back as the standby, not ready.
    const killed = (await podmanOk(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', ctr('a')])).trim();
    if (!killed.startsWith('running')) await kube!.podman(['start', ctr('a')]);
    const back = await waitFor(
      'relay a back as the standby',
      60_000,
      async () => {
        const r = await probe(ports.a, '/readyz');
        return r?.status === 503 && r.body.state === 'standby' ? r : null;
      },
      logsOf('a'),
    );
    report(`takeover: standby ready ${takeoverMs} ms after SIGKILL; killed container ${killed}, restarted: ${String(back.body.state)}, not ready`);

    // Recount.
    const last = writer.rows[writer.rows.length - 1]!.lsnAfterCommit;
    await waitFor('the slot confirmed past the last row', 60_000, async () => ((await confirmedFlushLsn(s.host.databaseUrl, SLOT)) ?? 0n) >= last);
    await collector.waitForDistinct(writer.rows.length, 60_000);
    const written = writer.ids();
    const seen = collector.distinctIds();
    const lost = [...written].filter((id) => !seen.has(id));
    const phantoms = [...seen].filter((id) => !written.has(id));
    const orderViolations = countOrderViolations(collector.records);
    report(
      `recount: ${written.size} rows written, ${seen.size} distinct in Kafka (${collector.records.length} records, ${collector.records.length - seen.size} duplicates), ${lost.length} lost, ${phantoms.length} phantoms, ${orderViolations} order violations; slot confirmed ${Lsn.format((await confirmedFlushLsn(s.host.databaseUrl, SLOT))!)}`,
    );
    expect(lost).toEqual([]);
    expect(phantoms).toEqual([]);
    expect(orderViolations).toBe(0);
    const pidB2 = Number((await podmanOk(['inspect', '--format', '{{.State.Pid}}', ctr('b')])).trim());
    report(`relay memory after the run: active (b) ${JSON.stringify(relayMemory(pidB2))} (MB)`);
  });
});
