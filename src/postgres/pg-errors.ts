import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';
import { NETWORK_ERROR_CODES } from './network-error-codes.js';

interface PgLikeError {
  code?: string;
  message?: string;
  detail?: string;
  hint?: string;
}

// Node's TLS verification failures: a wrong CA, host name or expired certificate never fixes itself.
const TLS_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
]);

export const STANDBY_HINT =
  'point the relay at the primary; a failover slot synchronized to this standby (PostgreSQL 17+, pg_replication_slots.synced) streams once the standby is promoted, so retrying is right (docs/operations.md, Failover slots)';

/**
 * Classifies a pg / replication error by SQLSTATE or errno where it enters.
 * `where` names the server and the operation for the message.
 */
export function classifyPgError(error: unknown, where: string, slot?: string): OutboxTailError {
  if (OutboxTailError.is(error)) return error;
  const e = (error ?? {}) as PgLikeError;
  const code = e.code ?? '';
  const text = `${where}: ${e.message ?? String(error)}${e.detail ? ` (${e.detail})` : ''}`;
  const opts = (o: { retriable?: boolean; hint?: string; exitCode?: number }) => ({ ...o, cause: error });
  switch (code) {
    case '55006':
      return new OutboxTailError('SLOT_ACTIVE', text, opts({ retriable: true, hint: 'another relay holds the slot; this one waits as a standby' }));
    case '42704':
      return new OutboxTailError(
        'SLOT_MISSING',
        text,
        opts({
          hint: `create the slot (outbox-tail init, or --create-slot) or check --slot; if it was dropped, events since may be lost: see the runbook in docs/operations.md`,
          exitCode: EXIT.PREFLIGHT,
        }),
      );
    case '55000':
      // PostgreSQL 17+ refuses a synchronized slot on a standby with the same
      // SQLSTATE as an invalidated one; the slot is fine, the server is not promoted yet.
      if (/being synchronized from the primary/i.test(`${e.message ?? ''} ${e.detail ?? ''}`)) {
        return new OutboxTailError('SERVER_IS_STANDBY', text, opts({ retriable: true, hint: STANDBY_HINT }));
      }
      return new OutboxTailError(
        'SLOT_INVALIDATED',
        text,
        opts({
          hint: `slot ${slot ?? ''} can no longer stream (invalidated, e.g. by max_slot_wal_keep_size): events may be lost; follow the runbook "Slot invalidated" (docs/operations.md) to move to a new slot`,
          exitCode: EXIT.SLOT_LOST,
        }),
      );
    case '28P01':
    case '28000':
      return new OutboxTailError(
        'PG_AUTH_FAILED',
        text,
        opts({ hint: 'check the user and password in --database-url and pg_hba.conf (a replication entry is needed)' }),
      );
    case '3D000':
      return new OutboxTailError('PG_DATABASE_MISSING', text, opts({ hint: 'check the database name in --database-url' }));
    case '42501':
      return new OutboxTailError('ROLE_CANNOT_REPLICATE', text, opts({ hint: 'ALTER ROLE <user> REPLICATION, or use a role with REPLICATION' }));
    case '53300':
      return new OutboxTailError('PG_ERROR', text, opts({ retriable: true, hint: 'too many connections or max_wal_senders reached: raise max_wal_senders' }));
  }
  if (TLS_CODES.has(code) || /The server does not support SSL connections/.test(e.message ?? '')) {
    return new OutboxTailError(
      'PG_TLS_FAILED',
      text,
      opts({ hint: 'check --pg-sslmode, --pg-sslrootcert and that the server certificate matches the host name in --database-url' }),
    );
  }
  if (NETWORK_ERROR_CODES.has(code) || code.startsWith('08') || code.startsWith('57P') || /Connection terminated|timeout expired/i.test(e.message ?? '')) {
    return new OutboxTailError('PG_UNREACHABLE', text, opts({ retriable: true, hint: 'check --database-url and that PostgreSQL is up and reachable' }));
  }
  return new OutboxTailError('PG_ERROR', text, opts({ retriable: true }));
}
