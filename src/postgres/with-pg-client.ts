import pg from 'pg';
import { describeTarget } from './describe-target.js';
import { pgConnection, type PgSettings } from './pg-connection.js';
import { classifyPgError } from './pg-errors.js';

/**
 * Runs `fn` on a normal (non-replication) connection made from the config and
 * always closes it. A failure to connect is classified and names the server
 * (never the password); `connectExitCode` overrides its exit code (preflight
 * failures exit 3 whatever the cause).
 */
export async function withPgClient<T>(config: PgSettings, fn: (client: pg.Client) => Promise<T>, options: { connectExitCode?: number } = {}): Promise<T> {
  const client = new pg.Client(pgConnection(config));
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    const classified = classifyPgError(error, `cannot connect to PostgreSQL at ${describeTarget(config)}`);
    throw options.connectExitCode === undefined ? classified : classified.withExitCode(options.connectExitCode);
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
