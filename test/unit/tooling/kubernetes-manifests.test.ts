/**
 * deploy/kubernetes/ (docs/kubernetes.md): what a cluster would only tell us
 * at apply time, or never. Every file parses; labels and selectors agree; the
 * pod runs as non-root on a read-only root with no capabilities; liveness is
 * /healthz and readiness /readyz on the named metrics port; secrets reach the
 * relay as files from the Secret, never as env values; the ConfigMap resolves
 * to a valid relay configuration; the grace period outlasts the drain.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/config-schema.js';
import { envName, optionKeys } from '../../../src/config/options.js';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { loadManifests, MANIFEST_DIR, only, type K8sObject } from '../../support/kubernetes-manifests.js';
import { tempDir } from '../../support/temp-dir.js';

const manifests = loadManifests();
const deployment = only(manifests, 'Deployment');
const configMap = only(manifests, 'ConfigMap');
const secret = only(manifests, 'Secret');
const service = only(manifests, 'Service');
const pdb = only(manifests, 'PodDisruptionBudget');
const serviceMonitor = only(manifests, 'ServiceMonitor');
const kustomization = only(manifests, 'Kustomization');
const pod = deployment.spec.template.spec;
const relay = pod.containers.find((c: K8sObject) => c.name === 'relay');

/** True when every label of `selector` is on `labels`. */
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('deploy/kubernetes manifests', () => {
  it('every file parses, and kustomization lists every manifest but the example Secret and the optional ServiceMonitor', () => {
    const files = [...new Set(manifests.map((m) => m.file))];
    expect(files).toEqual(
      expect.arrayContaining(['configmap.yaml', 'deployment.yaml', 'service.yaml', 'pod-disruption-budget.yaml', 'servicemonitor.yaml', 'secret.example.yaml']),
    );
    for (const r of kustomization.resources as string[]) expect(existsSync(join(MANIFEST_DIR, r)), r).toBe(true);
    expect([...(kustomization.resources as string[])].sort()).toEqual(
      files.filter((f) => !['kustomization.yaml', 'secret.example.yaml', 'servicemonitor.yaml'].includes(f)).sort(),
    );
  });

  it('runs the pair (active + standby) and selects its own pods: Deployment, Service, PodDisruptionBudget and ServiceMonitor agree', () => {
    expect(deployment.spec.replicas).toBe(2);
    const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
    expect(selects(deployment.spec.selector.matchLabels, podLabels)).toBe(true);
    expect(selects(service.spec.selector, podLabels)).toBe(true);
    expect(selects(pdb.spec.selector.matchLabels, podLabels)).toBe(true);
    expect(selects(serviceMonitor.spec.selector.matchLabels, service.metadata.labels!)).toBe(true);
    // A selector of the name label alone would take another slot's (shard's) pods too.
    for (const s of [deployment.spec.selector.matchLabels, service.spec.selector, pdb.spec.selector.matchLabels]) {
      expect(s['app.kubernetes.io/instance']).toBe(podLabels['app.kubernetes.io/instance']);
    }
    // A never-ready standby must not stall a rollout (maxUnavailable below the replicas would).
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(deployment.spec.replicas);
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('runs as non-root on a read-only root filesystem, without privilege escalation or capabilities', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(pod.securityContext.seccompProfile.type).toBe('RuntimeDefault');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(relay.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(relay.securityContext.capabilities.add).toBeUndefined();
    expect(relay.securityContext.privileged).not.toBe(true);
  });

  it('probes liveness on /healthz and readiness on /readyz through the named metrics port the Service and ServiceMonitor scrape', () => {
    const port = (relay.ports as K8sObject[]).find((p) => p.name === 'metrics');
    expect(port?.containerPort).toBe(Number(configMap.data.OUTBOX_TAIL_METRICS_LISTEN.split(':').pop()));
    expect(configMap.data.OUTBOX_TAIL_METRICS_LISTEN).toMatch(/^0\.0\.0\.0:/); // the kubelet probes the pod IP
    expect(relay.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(relay.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'metrics', targetPort: 'metrics' })]);
    // The standby is not ready by design: without this its metrics would not be scraped.
    expect(service.spec.publishNotReadyAddresses).toBe(true);
    expect(serviceMonitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
  });

  it('passes secrets as files mounted from the Secret, and no secret as an env value', () => {
    const mount = (relay.volumeMounts as K8sObject[]).find((m) => m.name === 'secrets');
    expect(mount?.readOnly).toBe(true);
    const volume = (pod.volumes as K8sObject[]).find((v) => v.name === 'secrets');
    expect(volume?.secret.secretName).toBe(secret.metadata.name);
    // Readable by the pod's group (fsGroup), by nobody else.
    expect(volume?.secret.defaultMode).toBe(0o440);
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
    const fileOptions = Object.entries(configMap.data as Record<string, string>).filter(([k]) => k.endsWith('_FILE'));
    expect(fileOptions.map(([k]) => k)).toContain('OUTBOX_TAIL_DATABASE_URL_FILE');
    for (const [, path] of fileOptions) {
      expect(path.startsWith(`${mount!.mountPath}/`), path).toBe(true);
      expect(Object.keys(secret.stringData)).toContain(path.slice(mount!.mountPath.length + 1));
    }
    const envs = [...Object.keys(configMap.data), ...((relay.env ?? []) as K8sObject[]).map((e) => e.name)];
    for (const name of ['OUTBOX_TAIL_DATABASE_URL', 'OUTBOX_TAIL_SASL_PASSWORD', 'DATABASE_URL']) expect(envs).not.toContain(name);
    expect(relay.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
  });

  it('the ConfigMap names only real options and, with the Secret as files, resolves to a valid relay configuration', () => {
    const known = new Set(optionKeys.map(envName));
    for (const key of Object.keys(configMap.data)) expect(known.has(key), `${key} is not an OUTBOX_TAIL_* option`).toBe(true);
    // The Secret's keys as files, where the ConfigMap says they are mounted.
    const root = tempDir('outbox-tail-k8s-');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(configMap.data as Record<string, string>)) {
      env[k] = k.endsWith('_FILE') ? join(root, v) : v;
      if (k.endsWith('_FILE')) {
        mkdirSync(join(root, v, '..'), { recursive: true });
        writeFileSync(join(root, v), `${secret.stringData[v.split('/').pop()!]}\n`);
      }
    }
    const config = resolveConfig({ env });
    expect(config.databaseUrl).toBe(secret.stringData['database-url']);
    expect(config.slot).toBe(configMap.data.OUTBOX_TAIL_SLOT);
    expect(config.createSlot).toBe(false);
  });

  it('gives the relay longer than its drain to stop, and memory requests and limits', () => {
    const drainMs = configSchema.parse({ slot: 's', databaseUrl: 'postgres://h/d' }).shutdownTimeoutMs;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs);
    const mi = (q: string) => Number(/^(\d+)Mi$/.exec(q)?.[1] ?? NaN);
    const { requests, limits } = relay.resources;
    expect(mi(requests.memory)).toBeGreaterThan(0);
    expect(mi(limits.memory)).toBeGreaterThanOrEqual(mi(requests.memory));
    expect(requests.cpu).toBeDefined();
  });
});
