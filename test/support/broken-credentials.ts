import { readFileSync } from 'node:fs';
import type { RunConfig } from '../../src/config/run-config.js';

/**
 * Deliberately broken password handling, for the negative control of the
 * pg-password-rotation fault scenario: the password file is read once at
 * start and kept in the URL (what --database-url-file did before), so the
 * relay cannot log in again once the password was rotated.
 */
export const CREDENTIAL_VARIANTS: Record<string, (config: RunConfig) => RunConfig> = {
  'password-read-once': (config) => {
    if (!config.pgPasswordFile || !config.databaseUrl) throw new Error('password-read-once needs --pg-password-file and --database-url');
    const url = new URL(config.databaseUrl);
    url.password = encodeURIComponent(readFileSync(config.pgPasswordFile, 'utf8').trim());
    return { ...config, databaseUrl: url.toString(), pgPasswordFile: undefined };
  },
};
