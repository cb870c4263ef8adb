import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('--version', () => {
  afterEach(() => vi.restoreAllMocks());

  it("prints the version of the package root's package.json and exits 0", async () => {
    let out = '';
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void (out += `${args.join(' ')}\n`));
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    await main(['--version']);
    expect(out).toBe(`${version}\n`);
    expect(exit).toHaveBeenCalledWith(0);
  });
});
