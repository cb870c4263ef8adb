/**
 * The private Podman engine's CLI (bin/container-engine.sh podman ...), for
 * what the Docker API cannot ask of Podman: --systemd=always,
 * --cgroups=enabled (the engine's default is disabled), podman cp into a
 * created container, podman healthcheck run.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ENGINE_SCRIPT = fileURLToPath(new URL('../../../bin/container-engine.sh', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `podman --remote ARGS` against the private engine; never throws on a non-zero exit. */
export function podman(args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(ENGINE_SCRIPT, ['podman', ...args], { timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0;
      if (error && code === -1) reject(new Error(`podman ${args.join(' ')}: ${error.message}`));
      else resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/**
 * podman 4.3's remote client sometimes loses its place in an exec's
 * multiplexed output stream ("channel "34" found, 0-3 supported: lost
 * synchronization with multiplexed stream", exit 125), more often the larger
 * the output. Such a run is retried; big outputs go through a file and
 * podman cp instead (see execToFile in the systemd test).
 */
export function lostStreamSync(r: CliResult): boolean {
  return r.code === 125 && /lost synchronization with multiplexed stream/.test(r.stderr);
}

/** Like podman() but throws unless the exit code is 0 (retries a lost exec stream, see lostStreamSync). */
export async function podmanOk(args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  let r = await podman(args, opts);
  for (let attempt = 1; attempt < 3 && lostStreamSync(r); attempt++) r = await podman(args, opts);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

export function isPrivatePodmanEngine(): boolean {
  return process.env.OUTBOX_TAIL_CONTAINER_ENGINE === 'podman';
}
