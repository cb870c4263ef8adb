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
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : -1) : 0;
      if (error && code === -1) reject(new Error(`podman ${args.join(' ')}: ${error.message}`));
      else resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Like podman() but throws unless the exit code is 0. */
export async function podmanOk(args: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  const r = await podman(args, opts);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

export function isPrivatePodmanEngine(): boolean {
  return process.env.OUTBOX_TAIL_CONTAINER_ENGINE === 'podman';
}
