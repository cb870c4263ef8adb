import { readFileSync } from 'node:fs';
import type { RunConfig } from '../../src/config/run-config.js';

/**
 * Deliberately broken credential handling, for negative controls: the
 * PostgreSQL password file read once at start and kept in the URL (what
 * --database-url-file did before: it cannot log in again once the password was
 * rotated), and an OAUTHBEARER token that is never renewed.
 */
export const CREDENTIAL_VARIANTS: Record<string, (config: RunConfig) => RunConfig> = {
  // OAUTHBEARER: the token endpoint's first answer, replayed for ever (a relay that never gets a new token).
  'token-never-refreshed': (config) => {
    const endpoint = config.saslOauthTokenEndpoint;
    if (!endpoint) throw new Error('token-never-refreshed needs --sasl-oauth-token-endpoint');
    const realFetch = globalThis.fetch;
    let first: { status: number; body: string } | null = null;
    globalThis.fetch = async (input, init) => {
      if (String(input instanceof Request ? input.url : input) !== endpoint) return realFetch(input, init);
      if (!first) {
        const response = await realFetch(input, init);
        first = { status: response.status, body: await response.text() };
      }
      return new Response(first.body, { status: first.status, headers: { 'content-type': 'application/json' } });
    };
    return config;
  },
  'password-read-once': (config) => {
    if (!config.pgPasswordFile || !config.databaseUrl) throw new Error('password-read-once needs --pg-password-file and --database-url');
    const url = new URL(config.databaseUrl);
    url.password = encodeURIComponent(readFileSync(config.pgPasswordFile, 'utf8').trim());
    return { ...config, databaseUrl: url.toString(), pgPasswordFile: undefined };
  },
};
