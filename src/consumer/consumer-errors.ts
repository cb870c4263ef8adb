import { NETWORK_ERROR_CODES } from '../postgres/network-error-codes.js';

/**
 * True for PostgreSQL errors that say nothing about the record: the connection
 * broke, the server is shutting down or overloaded, a deadlock or a
 * serialization failure. The consumer retries those without counting them
 * against the record (a database outage must not dead-letter healthy records).
 */
export function isTransientPgError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (NETWORK_ERROR_CODES.has(code)) return true;
  if (code.startsWith('08') || code.startsWith('57P') || code.startsWith('53')) return true;
  if (code === '40001' || code === '40P01') return true;
  return /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed|Connection is closed/i.test(
    message,
  );
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
