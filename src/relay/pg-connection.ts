import type { ClientConfig } from 'pg';
import type { RelayConfig } from '../config/config-schema.js';

/** pg client settings from the config; without a URL, pg applies the libpq PG* variables itself. */
export function pgConnection(config: Pick<RelayConfig, 'databaseUrl' | 'connectTimeoutMs'>): ClientConfig {
  return {
    ...(config.databaseUrl ? { connectionString: config.databaseUrl } : {}),
    connectionTimeoutMillis: config.connectTimeoutMs,
    keepAlive: true,
    application_name: 'outbox-tail',
  };
}
