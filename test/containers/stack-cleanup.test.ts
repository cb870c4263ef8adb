/**
 * No container outlives the test that made it, on an engine without Ryuk:
 * neither after a failed test (teardown still runs) nor after a test process
 * killed with SIGKILL (the next stack removes what a dead owner left).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OWNER_LABEL, removeOrphanContainers } from '../../dev/stack/testcontainers-stack.js';

async function containersOwnedBy(pid: number): Promise<string[]> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  return (await client.container.list()).filter((c) => c.Labels?.[OWNER_LABEL] === String(pid)).map((c) => c.Id);
}

function exited(child: ReturnType<typeof spawn>): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('container cleanup without Ryuk', () => {
  it('removes the containers of a test process killed with SIGKILL before its teardown', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/containers/fixtures/hold-stack.ts'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const gone = exited(child);
    const ready = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('ready '));
        if (line) resolve(line);
      });
      void gone.then((code) => reject(new Error(`hold-stack exited (code ${code}) before its stack was ready`)));
    });
    const pid = child.pid!;
    expect(ready).toContain(`ready ${pid}`);
    expect(await containersOwnedBy(pid)).toHaveLength(2);

    child.kill('SIGKILL');
    await gone;
    // Nobody cleaned up: on this engine there is no Ryuk to do it.
    expect(await containersOwnedBy(pid)).toHaveLength(2);

    const removed = await removeOrphanContainers((line) => console.log(line));
    expect(removed).toBeGreaterThanOrEqual(2);
    expect(await containersOwnedBy(pid)).toEqual([]);
  });

  it('removes the containers of a test that failed while holding a stack', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'outbox-tail-fixture-')), 'pid');
    // Its output (a failing test on purpose) is shown only when this test fails.
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/containers/fixtures/vitest.fixture.config.ts'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OUTBOX_TAIL_FIXTURE_PID_FILE: pidFile },
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await exited(child);
    expect(code, output).toBe(1); // vitest's exit code for a failed test: the fixture did fail
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(output).toContain('fails on purpose while holding a stack');
    expect(await containersOwnedBy(pid), output).toEqual([]);
  });
});
