import { readFileSync } from 'node:fs';
import { EXIT, OutboxTailError } from './outbox-tail-error.js';

/** Why a file could not be read, as short as an operator needs it (ENOENT, EACCES, ...). */
export function fileErrorReason(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/**
 * A secret kept in a file (--database-url-file, --sasl-password-file), so it
 * stays out of argv and the environment. Trimmed: files written by editors
 * and secret managers end with a newline that is not part of the secret.
 * Throws a config error whose message names the file and the reason; the
 * caller knows which option named it.
 */
export function readSecretFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new OutboxTailError('CONFIG_INVALID', `cannot read ${path}: ${fileErrorReason(error)}`, { exitCode: EXIT.CONFIG, cause: error });
  }
  if (text === '') throw new OutboxTailError('CONFIG_INVALID', `file ${path} is empty`, { exitCode: EXIT.CONFIG });
  return text;
}
