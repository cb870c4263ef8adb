import { OutboxTailError } from '../shared/outbox-tail-error.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/** Quotes one SQL identifier ("my col" -> "\"my col\""). */
export function quoteIdentifier(name: string): string {
  if (name.length === 0 || name.includes('\u0000')) {
    throw new OutboxTailError('CONFIG_INVALID', `invalid SQL identifier ${JSON.stringify(name)}`);
  }
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Quotes a table name given as "table" or "schema.table". Each part must be a
 * plain identifier (letters, digits, _ and $), so a dot is never ambiguous.
 */
export function quoteTableName(name: string): string {
  const parts = name.split('.');
  if (parts.length > 2 || parts.some((p) => !IDENTIFIER.test(p))) {
    throw new OutboxTailError('CONFIG_INVALID', `invalid table name ${JSON.stringify(name)}: expected "table" or "schema.table"`, {
      hint: 'use letters, digits, _ and $ in each part',
    });
  }
  return parts.map(quoteIdentifier).join('.');
}
