import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * In a process of its own: kafkajs's produce request loads before the encoder
 * can replace what it captures (as when kafkajs's internals moved), so the
 * sink falls back to kafkajs's encoder, and must say so once, not silently.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
import pino from 'pino';
import { installRecordEncoder } from './src/sink/kafkajs/kafka-sink.ts';
createRequire(import.meta.url)('kafkajs/src/protocol/requests/produce/v3/request.js');
const logger = pino({ base: null, timestamp: false });
installRecordEncoder(logger);
installRecordEncoder(logger);
`;

describe("the kafkajs record encoder's fallback", () => {
  it('logs one warning when the fast encoder could not be installed, not one per session', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; event?: string; msg: string });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, event: 'kafkajs-encoder-fallback' });
    expect(lines[0]!.msg).toMatch(/kafkajs's own record encoder is in use/);
  });
});
