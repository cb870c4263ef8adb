import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

// No server needed: the built CLI is run as an operator would (npm run build first, as for every integration test).
describe('outbox-tail --version', () => {
  it("prints package.json's version and exits 0, connecting to nothing", async () => {
    const result = await runCli(['--version'], {});
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
    expect(result.stderr).toBe('');
  });
});
