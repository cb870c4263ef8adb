import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp-dir.js';
import { reshardCommand } from '../../../src/commands/reshard/reshard-command.js';
import { OPTIONS, flagName, optionKeys } from '../../../src/config/options.js';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { toRunConfig } from '../../../src/config/run-config.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';

const dir = tempDir('outbox-tail-bounds-');

/** The config error's message, or a failure when the config was accepted. */
function refusal(resolve: () => unknown): string {
  try {
    resolve();
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxTailError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', retriable: false, exitCode: 2 });
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

const msKeys = optionKeys.filter((key) => key.endsWith('Ms'));

describe('every *Ms option fits a Node timer', () => {
  it('knows the *Ms options it bounds', () => {
    expect(msKeys).toContain('connectTimeoutMs');
    expect(msKeys).toContain('shutdownTimeoutMs');
    expect(msKeys.length).toBeGreaterThanOrEqual(15);
  });

  it.each(msKeys)('refuses %s above 2147483647 ms (a longer timer fires after 1 ms), naming the limit', (key) => {
    const message = refusal(() => resolveConfig({ flags: { [key]: 3_000_000_000 } }));
    expect(message).toContain(`--${flagName(key)}`);
    expect(message).toContain('2147483647');
    expect(resolveConfig({ flags: { [key]: 2_147_483_647, ...(key === 'restartBackoffInitialMs' ? { restartBackoffMaxMs: 2_147_483_647 } : {}) } })[key]).toBe(
      2_147_483_647,
    );
  });

  it('shows the limit in --help', () => {
    for (const key of msKeys) expect(OPTIONS[key].max, key).toBe(2_147_483_647);
  });
});

describe('--metrics-listen', () => {
  it('refuses a port above 65535 as a config error naming the option, before preflight', () => {
    const message = refusal(() => resolveConfig({ flags: { metricsListen: '0.0.0.0:99999' } }));
    expect(message).toContain('--metrics-listen');
    expect(message).toContain('65535');
    expect(refusal(() => resolveConfig({ env: { OUTBOX_TAIL_METRICS_LISTEN: '[::1]:65536' } }))).toContain('--metrics-listen');
    expect(resolveConfig({ flags: { metricsListen: '0.0.0.0:65535' } }).metricsListen).toBe('0.0.0.0:65535');
    expect(resolveConfig({ flags: { metricsListen: '127.0.0.1:0' } }).metricsListen).toBe('127.0.0.1:0');
  });
});

describe('shard slot and publication names', () => {
  const slot62 = 's'.repeat(62);

  it('refuses a shard slot name longer than 63 bytes after its suffix (PostgreSQL would truncate two shards to one slot)', () => {
    for (const shard of ['0/2', '1/2']) {
      const message = refusal(() => resolveConfig({ flags: { slot: slot62, shard } }));
      expect(message).toContain('--slot');
      expect(message).toContain('63');
    }
    expect(refusal(() => resolveConfig({ flags: { slot: slot62, shards: 2 } }))).toContain('--slot');
    // 61 characters + "_1" is 63: still a name of its own.
    expect(resolveConfig({ flags: { slot: 's'.repeat(61), shard: '1/2' } }).slot).toBe(`${'s'.repeat(61)}_1`);
    // Ten shards: the longest suffix is _9, two bytes, like _1.
    expect(refusal(() => resolveConfig({ flags: { slot: 's'.repeat(61), shards: 11 } }))).toContain('--slot');
  });

  it('refuses a shard publication name longer than 63 bytes after its suffix, and any publication name above 63 bytes', () => {
    expect(refusal(() => resolveConfig({ flags: { slot: 'a', publication: 'p'.repeat(62), shard: '0/2' } }))).toContain('--publication');
    expect(refusal(() => resolveConfig({ flags: { publication: 'p'.repeat(64) } }))).toContain('--publication');
    // Bytes, not characters: PostgreSQL truncates the UTF-8 encoding.
    expect(refusal(() => resolveConfig({ flags: { publication: 'é'.repeat(32) } }))).toContain('--publication');
    expect(resolveConfig({ flags: { publication: 'p'.repeat(63) } }).publication).toBe('p'.repeat(63));
  });
});

describe('config file size', () => {
  it('refuses a config file above 1 MiB, naming the file and the limit, without reading it whole', () => {
    const big = join(dir, 'big.yaml');
    const fd = openSync(big, 'w');
    const line = `# ${'x'.repeat(1021)}\n`;
    for (let i = 0; i < 50 * 1024; i++) writeSync(fd, line);
    closeSync(fd);
    const message = refusal(() => resolveConfig({ configFile: big }));
    expect(message).toContain(big);
    expect(message).toContain('1 MiB');
  });

  it('reads a config file of up to 1 MiB', () => {
    const ok = join(dir, 'ok.yaml');
    writeFileSync(ok, `slot: from_file\n${`# ${'x'.repeat(1021)}\n`.repeat(1000)}`);
    expect(resolveConfig({ configFile: ok }).slot).toBe('from_file');
  });
});

describe('reshard names', () => {
  it('refuses, before connecting, new shard slot names longer than 63 bytes after their suffix', async () => {
    const config = toRunConfig(resolveConfig({ flags: { slot: 's'.repeat(58), databaseUrl: 'postgres://127.0.0.1:1/closed' } }));
    const io = { env: {}, warn: () => undefined, progress: () => undefined };
    const args = { from: 2, to: 4, 'step-timeout-ms': 1000 } as Parameters<typeof reshardCommand.run>[1];
    // <slot>_n4 is 61 bytes, its shard _3 is 63: accepted up to the connection.
    const reshard = (slot: string) => Promise.resolve().then(() => reshardCommand.run({ ...config, slot }, args, io));
    await expect(reshard('s'.repeat(58))).rejects.not.toMatchObject({ code: 'CONFIG_INVALID' });
    const refused = await reshard('s'.repeat(60)).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((refused as Error).message).toContain('--to-slot');
  });
});

describe('--topic', () => {
  it('refuses a fixed topic that is the dead-letter or offsets topic (every row would be refused at run time)', () => {
    expect(refusal(() => resolveConfig({ flags: { topic: 'outbox.dlq', deadLetterTopic: 'outbox.dlq' } }))).toContain('--topic');
    expect(refusal(() => resolveConfig({ flags: { topic: 'outbox-tail.offsets' } }))).toContain('--topic');
    expect(resolveConfig({ flags: { topic: 'outbox.{aggregate_type}', deadLetterTopic: 'outbox.dlq' } }).topic).toBe('outbox.{aggregate_type}');
  });
});
