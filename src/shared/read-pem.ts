import { readFileSync } from 'node:fs';
import { EXIT, OutboxTailError } from './outbox-tail-error.js';
import { fileErrorReason } from './read-secret-file.js';

/**
 * Reads a PEM file named by an option (`flag`, its command-line name: TLS CA, certificate, key) for
 * PostgreSQL or Kafka. Called at every connect, so rotated certificates are
 * picked up on reconnect; a clear, non-retriable config error when it cannot.
 */
export function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new OutboxTailError('CONFIG_INVALID', `cannot read --${flag} file ${path}: ${fileErrorReason(error)}`, {
      hint: 'check the path and that the relay user may read it',
      exitCode: EXIT.CONFIG,
      cause: error,
    });
  }
}
