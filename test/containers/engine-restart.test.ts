/**
 * A session that ends abruptly kills the private Podman service with its
 * containers. The next service must start clean: stop 46's CI failed because
 * the new service still believed those containers running and every list
 * failed with "joining network namespace of container ...: unknown FS magic".
 *
 * The test runs a second engine in a directory of its own (so the suite's
 * engine is untouched), with a one-file image (catatonit is static) so no
 * image has to be built.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENGINE_SCRIPT } from './support/podman.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'outbox-tail-engine-'));
const engineDir = join(cacheDir, 'containers');
// The suite's engine env (DOCKER_HOST, CONTAINERS_CONF...) is rewritten by the script for the new directory.
const env: NodeJS.ProcessEnv = { ...process.env, OUTBOX_TAIL_CACHE_DIR: cacheDir };

function engine(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(ENGINE_SCRIPT, args, { env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function engineOk(args: string[]): Promise<string> {
  const r = await engine(args);
  if (r.code !== 0) throw new Error(`container-engine.sh ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** Every process whose command line names the test engine's directory. */
function processesOfEngine(): string[] {
  try {
    return execFileSync('pgrep', ['-af', engineDir], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Every process running inside one of the test engine's containers (its root is our overlay). */
function containerProcessesOfEngine(): string[] {
  const want = `upperdir=${engineDir}/storage/overlay/`;
  return readdirSync('/proc').filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
        .split('\n')
        .some((line) => line.split(' ')[4] === '/' && line.includes(want));
    } catch {
      return false; // exited meanwhile
    }
  });
}

afterAll(async () => {
  await engine(['stop']);
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('the private engine after a service killed with its containers', () => {
  it('starts clean: lists no container of the dead service and runs new ones', async () => {
    await engineOk(['start']);
    const rootfs = join(cacheDir, 'rootfs');
    mkdirSync(rootfs);
    copyFileSync('/usr/bin/catatonit', join(rootfs, 'catatonit'));
    const tar = join(cacheDir, 'pause.tar');
    execFileSync('tar', ['-C', rootfs, '-cf', tar, '.']);
    await engineOk(['podman', 'import', '--change', 'CMD ["/catatonit","-P"]', tar, 'localhost/outbox-tail-test/pause:1']);
    const first = (await engineOk(['podman', 'run', '-d', '--network', 'slirp4netns', 'localhost/outbox-tail-test/pause:1'])).trim();
    expect(await engineOk(['podman', 'ps', '-q', '--no-trunc'])).toContain(first);

    // The abrupt end: the service's process group and every conmon of this engine, SIGKILL, no stop.
    process.kill(-Number(readFileSync(join(engineDir, 'service.pid'), 'utf8')), 'SIGKILL');
    try {
      execFileSync('pkill', ['-KILL', '-f', `conmon.*${engineDir}`]);
    } catch {
      // pkill exits 1 when nothing matched
    }

    expect(containerProcessesOfEngine(), 'the dead service left its container running').not.toEqual([]);

    await engineOk(['start']);
    expect(containerProcessesOfEngine(), 'the new service killed the container the dead one left').toEqual([]);
    const listed = await engine(['podman', 'ps', '-a', '-q', '--no-trunc']);
    expect(listed.stderr, 'the new service lists without an error about the dead one').not.toMatch(/unknown FS magic|joining network namespace/);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim(), 'no container of the dead service is left').toBe('');

    const second = (await engineOk(['podman', 'run', '-d', '--network', 'slirp4netns', 'localhost/outbox-tail-test/pause:1'])).trim();
    expect(await engineOk(['podman', 'ps', '-q', '--no-trunc'])).toContain(second);

    await engineOk(['stop']);
    expect(processesOfEngine(), 'stop leaves no process of the engine').toEqual([]);
    expect(containerProcessesOfEngine(), 'stop leaves no container process').toEqual([]);
  });
});
