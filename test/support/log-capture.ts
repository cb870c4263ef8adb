import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/shared/create-logger.js';

/** A logger of the relay's own shape whose JSON lines are kept, parsed, for assertions. */
export function captureLogs(level = 'info'): { lines: Array<Record<string, unknown>>; logger: Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger(level, stream) };
}
