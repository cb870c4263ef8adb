import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';

// Nothing listens on port 1: a command that got past its option checks fails to connect instead.
const closed = ['--database-url', 'postgres://relay@127.0.0.1:1/app', '--brokers', '127.0.0.1:1', '--slot', 's', '--connect-timeout-ms', '1000'];

async function stderrOf(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const code = await main([...args, ...closed]);
  return { code, stderr };
}

describe("a command's own numbers are checked before any connection", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [['replay', '--from', '1h', '--batch-size', 'abc'], '--batch-size'],
    [['replay', '--from', '1h', '--batch-size', '1.5'], '--batch-size'],
    [['replay', '--from', '1h', '--kafka-margin-ms', '-1'], '--kafka-margin-ms'],
    [['prune', '--older-than', '7d', '--batch-size', '0'], '--batch-size'],
    [['recover', '--since', '2026-01-01T00:00:00Z', '--batch-size', '0'], '--batch-size'],
    [['verify', '--from', '1h', '--list', '-1'], '--list'],
    [['verify', '--from', '1h', '--kafka-margin-ms', '3000000000'], '--kafka-margin-ms'],
    [['reshard', '--from', '2', '--to', '4', '--step-timeout-ms', '3000000000'], '--step-timeout-ms'],
  ])('refuses %j as a config error naming %s, not a connection error', async (args, flag) => {
    const { code, stderr } = await stderrOf(args);
    expect(stderr).toContain('CONFIG_INVALID');
    expect(stderr).toContain(flag);
    expect(stderr).not.toMatch(/cannot connect|UNREACHABLE/);
    expect(code).toBe(2);
  });

  it('still takes valid numbers (and then reaches the closed port)', async () => {
    const { code, stderr } = await stderrOf(['prune', '--older-than', '7d', '--batch-size', '10']);
    expect(stderr).toMatch(/PG_UNREACHABLE/);
    expect(code).not.toBe(2);
  });
});
