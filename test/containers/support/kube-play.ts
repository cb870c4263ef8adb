/**
 * `podman kube play` / `kube down` for test/containers/kubernetes-manifests.test.ts,
 * on the private engine of bin/container-engine.sh.
 *
 * Why not `podman --remote kube play` like every other call: that engine runs
 * with `cgroups = "disabled"` (crun refuses this host's hybrid cgroups, see
 * docs/containers.md), and Podman 4.3 then creates a pod without a cgroup and
 * fails to add kube play's containers to it ("pod ... cgroup is not set:
 * internal libpod error"). So kube play runs as a local podman, in the engine
 * service's own mount namespace (where the cgroup2 mount is hidden, so crun
 * accepts cgroups), on the same storage, with a copy of the engine's
 * containers.conf that enables cgroups. The pods' cgroups live under
 * /libpod_parent in each v1 hierarchy; removePodCgroups() removes them after.
 * Everything else (inspect, logs, kill) goes through the API as usual.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isPrivatePodmanEngine } from './podman.js';

export interface KubePlay {
  /** Runs `podman kube play --network host --replace FILE` (pods share the host's network; nothing on it changes). */
  play(file: string): Promise<string>;
  /** `podman kube down FILE`; never throws. */
  down(file: string): Promise<string>;
  /** `podman ARGS` the same way (secret rm, pod ps); never throws. */
  podman(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

export const CGROUP_ROOT = '/sys/fs/cgroup';
export const POD_CGROUP_PARENT = 'libpod_parent';

export function kubePlay(workDir: string): KubePlay {
  if (!isPrivatePodmanEngine() || !process.env.CONTAINERS_CONF) {
    throw new Error('the Kubernetes manifests test drives `podman kube play`: run it through bin/with-engine.sh, which starts the private Podman engine');
  }
  const engineDir = dirname(process.env.CONTAINERS_CONF);
  const servicePid = readFileSync(join(engineDir, 'service.pid'), 'utf8').trim();
  const conf = join(workDir, 'containers.conf');
  writeFileSync(conf, readFileSync(process.env.CONTAINERS_CONF, 'utf8').replace(/^cgroups = "disabled"$/m, 'cgroups = "enabled"'));
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'nsenter',
        ['-t', servicePid, '-m', 'podman', ...args],
        { env: { ...process.env, CONTAINERS_CONF: conf }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  return {
    async play(file) {
      const r = await run(['kube', 'play', '--network', 'host', '--replace', file]);
      if (r.code !== 0) throw new Error(`podman kube play ${file} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
      return r.stdout;
    },
    async down(file) {
      const r = await run(['kube', 'down', file]);
      return `${r.stdout}${r.stderr}`.trim();
    },
    podman: run,
  };
}

/** Pod cgroup directories (one per v1 hierarchy) of these pod ids, deepest first. */
function podCgroupDirs(podIds: string[]): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
    dirs.push(dir);
  };
  if (!existsSync(CGROUP_ROOT)) return dirs;
  for (const h of readdirSync(CGROUP_ROOT)) {
    for (const id of podIds) {
      const dir = join(CGROUP_ROOT, h, POD_CGROUP_PARENT, id);
      if (existsSync(dir)) walk(dir);
    }
  }
  return dirs;
}

/** Hierarchies that have a /libpod_parent now (to tell ours from one that was there before). */
export function hierarchiesWithPodParent(): Set<string> {
  if (!existsSync(CGROUP_ROOT)) return new Set();
  return new Set(readdirSync(CGROUP_ROOT).filter((h) => existsSync(join(CGROUP_ROOT, h, POD_CGROUP_PARENT))));
}

/**
 * Removes the cgroups Podman left for these pods (conmon's name=systemd ones
 * stay after kube down), then /libpod_parent where it was not there before.
 * Returns what could not be removed.
 */
export function removePodCgroups(podIds: string[], hadParentBefore: Set<string>): string[] {
  const left: string[] = [];
  for (const dir of podCgroupDirs(podIds)) {
    try {
      rmdirSync(dir);
    } catch {
      left.push(dir);
    }
  }
  for (const h of hierarchiesWithPodParent()) {
    if (hadParentBefore.has(h)) continue;
    try {
      rmdirSync(join(CGROUP_ROOT, h, POD_CGROUP_PARENT));
    } catch {
      left.push(join(CGROUP_ROOT, h, POD_CGROUP_PARENT));
    }
  }
  return left;
}
