import type { ConnectionOptions } from 'node:tls';
import type { ClientConfig } from 'pg';
import { readPem } from '../shared/read-pem.js';

/** What a PostgreSQL connection is made from (--database-url, --connect-timeout-ms, --pg-ssl*). */
export interface PgSettings {
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
  const connectionString = config.databaseUrl && ssl !== undefined ? withoutTlsParams(config.databaseUrl) : config.databaseUrl;
  return {
    ...(connectionString ? { connectionString } : {}),
    ...(ssl !== undefined ? { ssl } : {}),
    connectionTimeoutMillis: config.connectTimeoutMs,
    keepAlive: true,
    application_name: 'outbox-tail',
  };
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
