import type { ConnectionOptions } from 'node:tls';
import type { ClientConfig } from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { readPem } from '../shared/read-pem.js';
import { hasPostgresScheme } from '../shared/has-postgres-scheme.js';
import { readSecretFile } from '../shared/read-secret-file.js';
import { pgPasswordFunction, type PgPasswordSettings } from './pg-password-source.js';

/** What a PostgreSQL connection is made from (--database-url[-file], --pg-password-*, --pg-auth, --connect-timeout-ms, --pg-ssl*). */
export interface PgSettings extends PgPasswordSettings {
  /** Absent: pg applies the libpq PG* variables itself. */
  databaseUrl?: string | undefined;
  connectTimeoutMs: number;
  pgSslmode?: 'disable' | 'require' | 'verify-ca' | 'verify-full' | undefined;
  pgSslrootcert?: string | undefined;
  pgSslcert?: string | undefined;
  pgSslkey?: string | undefined;
}

/** URL parameters that would override an explicit `ssl` object in node-postgres. */
const URL_TLS_PARAMS = ['ssl', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword', 'uselibpqcompat'];

/**
 * pg client settings from the config; without a URL, pg applies the libpq PG*
 * variables itself. With --pg-sslmode the TLS settings come from the options
 * (the URL's own ssl* parameters are then ignored), read from the files at
 * every connect so rotated certificates are picked up on reconnect.
 */
export function pgConnection(config: PgSettings): ClientConfig {
  const ssl = pgTls(config);
  const url = currentUrl(config);
  const connectionString = url && ssl !== undefined ? withoutTlsParams(url) : url;
  const password = pgPasswordFunction(config);
  const common = {
    ...(ssl !== undefined ? { ssl } : {}),
    connectionTimeoutMillis: config.connectTimeoutMs,
    keepAlive: true,
    application_name: 'outbox-tail',
  };
  if (!password) return { ...(connectionString ? { connectionString } : {}), ...common };
  // pg lets a connection string's password (even an absent one, as '') win over `password`: the URL goes in as fields.
  const fields = connectionString ? urlFields(connectionString) : {};
  return { ...fields, ...common, password: password as ClientConfig['password'] };
}

/** --database-url-file is read again for every connection made from the config (a rotated URL is used on reconnect). */
function currentUrl(config: PgSettings): string | undefined {
  if (!config.databaseUrlFile) return config.databaseUrl;
  let url: string;
  try {
    url = readSecretFile(config.databaseUrlFile);
  } catch (error) {
    throw new OutboxTailError('PG_PASSWORD_UNAVAILABLE', `--database-url-file: ${(error as Error).message}`, {
      retriable: true,
      hint: 'a secret manager may be rewriting it; it must hold one postgres:// URL',
      cause: error,
    });
  }
  // A rewritten file is checked as the config checked the first one; its text is never quoted (it may hold a password).
  if (!hasPostgresScheme(url)) {
    throw new OutboxTailError('PG_PASSWORD_UNAVAILABLE', '--database-url-file: does not hold a postgres:// or postgresql:// URL (its text is not shown)', {
      retriable: true,
      hint: 'a secret manager may be rewriting it; it must hold one postgres:// URL',
    });
  }
  return url;
}

/** The URL's settings as pg client fields, without its password. */
function urlFields(url: string): ClientConfig {
  const { password: _ignored, ...rest } = parseConnectionString(url);
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) fields[k] = k === 'port' ? Number(v) : v;
  return fields as ClientConfig;
}

/**
 * node-postgres `ssl` for an sslmode with libpq's meaning:
 * disable = no TLS; require = TLS, no verification (unless a root CA is given:
 * then like verify-ca, as libpq does); verify-ca = the chain; verify-full = the
 * chain and the host name (IP SANs for IP addresses). undefined = not configured.
 */
function pgTls(config: Omit<PgSettings, 'connectTimeoutMs'>): false | ConnectionOptions | undefined {
  const mode = config.pgSslmode;
  if (mode === undefined) {
    if (config.pgSslrootcert || config.pgSslcert) return pgTls({ ...config, pgSslmode: 'verify-full' });
    return undefined;
  }
  if (mode === 'disable') return false;
  if (mode === 'verify-ca' && !config.pgSslrootcert) {
    throw new OutboxTailError('CONFIG_INVALID', 'sslmode verify-ca without a root certificate would trust any publicly signed server certificate', {
      retriable: false,
      hint: "give --pg-sslrootcert <the CA file> (as libpq requires), or use verify-full to trust the system's CAs with a host name check",
    });
  }
  const tls: ConnectionOptions = {};
  if (config.pgSslrootcert) tls.ca = readPem(config.pgSslrootcert, 'pg-sslrootcert');
  if (config.pgSslcert) tls.cert = readPem(config.pgSslcert, 'pg-sslcert');
  if (config.pgSslkey) tls.key = readPem(config.pgSslkey, 'pg-sslkey');
  if (mode === 'require' && !config.pgSslrootcert) {
    tls.rejectUnauthorized = false;
  } else if (mode === 'require' || mode === 'verify-ca') {
    tls.rejectUnauthorized = true;
    tls.checkServerIdentity = () => undefined;
  } else {
    tls.rejectUnauthorized = true;
  }
  return tls;
}

function withoutTlsParams(url: string): string {
  try {
    const parsed = new URL(url);
    for (const p of URL_TLS_PARAMS) parsed.searchParams.delete(p);
    return parsed.toString();
  } catch {
    return url;
  }
}
