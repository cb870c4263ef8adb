import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialChecks } from '../../../src/commands/doctor/credential-checks.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('outbox-tail-doctor-credentials-');
let server: Server;
let endpoint = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    const ok = req.headers.authorization === `Basic ${Buffer.from('relay:good').toString('base64')}`;
    res
      .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
      .end(JSON.stringify(ok ? { access_token: 'token-secret-value', expires_in: 300 } : { error: 'invalid_client' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const base = { connectTimeoutMs: 2_000, databaseUrl: 'postgres://relay@db.internal:5432/app' };

describe('doctor: the credential sources read at every connection', () => {
  it('reports a readable password file, and a failing password command with its first error line, never the password', async () => {
    const file = join(dir, 'pw');
    writeFileSync(file, 'p4ss-secret\n');
    const [ok] = await credentialChecks({ ...base, pgPasswordFile: file });
    expect(ok).toMatchObject({ check: 'postgres password source', status: 'ok' });
    const [failed] = await credentialChecks({ ...base, pgPasswordCommand: 'echo p4ss-secret; echo "vault: permission denied" >&2; exit 2' });
    expect(failed).toMatchObject({ status: 'fail' });
    expect(failed!.found).toMatch(/--pg-password-command: .*exited with 2: vault: permission denied/);
    expect(JSON.stringify([ok, failed])).not.toContain('p4ss-secret');
  });

  it('asks the OAUTHBEARER token endpoint once: a token valid for its lifetime, or the refusal with the options to check', async () => {
    const oauth = { saslMechanism: 'oauthbearer' as const, saslOauthTokenEndpoint: endpoint, saslOauthClientId: 'relay' };
    const [ok] = await credentialChecks({ ...base, ...oauth, saslOauthClientSecret: 'good' });
    expect(ok).toMatchObject({ check: 'kafka oauth token endpoint', status: 'ok' });
    expect(ok!.found).toMatch(/a token from http:\/\/127\.0\.0\.1:\d+ for client relay, valid for (299|300) s/);
    const [refused] = await credentialChecks({ ...base, ...oauth, saslOauthClientSecret: 'bad' });
    expect(refused).toMatchObject({ status: 'fail' });
    expect(refused!.found).toMatch(/HTTP 401\): invalid_client/);
    expect(refused!.fix).toMatch(/--sasl-oauth-client-id/);
    expect(JSON.stringify([ok, refused])).not.toContain('token-secret-value');
  });

  it('has nothing to check without such a source', async () => {
    expect(await credentialChecks(base)).toEqual([]);
  });
});
