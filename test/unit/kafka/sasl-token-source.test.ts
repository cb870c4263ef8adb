import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { kafkaSecurity } from '../../../src/kafka/kafka-security.js';
import { cachedTokenSource, mskIamTokenSource, oidcTokenSource } from '../../../src/kafka/sasl-token-source.js';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import type { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';

/** A token endpoint answering what `reply` says, recording each request's form and Authorization header. */
let server: Server;
let endpoint = '';
const requests: Array<{ form: URLSearchParams; authorization: string | undefined }> = [];
let reply: () => { status: number; body: unknown } = () => ({ status: 200, body: { access_token: 'token-1', expires_in: 60, token_type: 'Bearer' } });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push({ form: new URLSearchParams(body), authorization: req.headers.authorization });
      const { status, body: out } = reply();
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const oidc = () => ({ tokenEndpoint: endpoint, clientId: 'outbox tail', clientSecret: 's3cret:x', scope: 'kafka', extensions: { logicalCluster: 'lkc-1' } });

describe('SASL/OAUTHBEARER tokens', () => {
  it('asks the token endpoint with the client credentials grant and HTTP Basic client authentication', async () => {
    requests.length = 0;
    reply = () => ({ status: 200, body: { access_token: 'token-1', expires_in: 60 } });
    const token = await oidcTokenSource(oidc(), 5_000)();
    expect(token).toMatchObject({ value: 'token-1', extensions: { logicalCluster: 'lkc-1' } });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.form.get('grant_type')).toBe('client_credentials');
    expect(requests[0]!.form.get('scope')).toBe('kafka');
    expect(Buffer.from(requests[0]!.authorization!.replace('Basic ', ''), 'base64').toString()).toBe('outbox%20tail:s3cret%3Ax');
  });

  it('never hands out a token with less than 30 s left: a short-lived one is fetched for every authentication', async () => {
    let now = 1_000_000;
    let fetches = 0;
    const source = cachedTokenSource(
      async () => ({ value: `t${++fetches}`, expiresAt: now + 30_000 }),
      () => now,
    );
    await source();
    now += 1;
    await source();
    expect(fetches, 'a 30 s token has less than 30 s left a moment later').toBe(2);
    const long = cachedTokenSource(
      async () => ({ value: 'long', expiresAt: now + 100_000 }),
      () => now,
    );
    let longFetches = 0;
    const counted = cachedTokenSource(
      async () => ({ ...(await long()), value: `l${++longFetches}` }),
      () => now,
    );
    await counted();
    now += 69_000;
    await counted();
    expect(longFetches, 'a 100 s token is served until 30 s before its end (80% would be 80 s)').toBe(1);
    now += 2_000;
    await counted();
    expect(longFetches).toBe(2);
  });

  it('serves the cached token until 80% of its lifetime, then fetches once for every caller', async () => {
    let now = 1_000_000;
    let fetches = 0;
    const source = cachedTokenSource(
      async () => ({ value: `t${++fetches}`, expiresAt: now + 1_000_000 }),
      () => now,
    );
    expect((await source()).value).toBe('t1');
    now += 790_000;
    expect((await source()).value).toBe('t1');
    now += 20_000;
    const [a, b, c] = await Promise.all([source(), source(), source()]);
    expect([a.value, b.value, c.value]).toEqual(['t2', 't2', 't2']);
    expect(fetches).toBe(2);
  });

  it('a refused client is an error naming the options, not retried; a failing or unreachable endpoint is retried', async () => {
    reply = () => ({ status: 401, body: { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' } });
    const refused = (await oidcTokenSource(oidc(), 5_000)().catch((e: unknown) => e)) as OutboxTailError;
    expect(refused).toMatchObject({ code: 'KAFKA_AUTH_FAILED', retriable: false });
    expect(refused.message).toMatch(/refused a token \(HTTP 401\): invalid_client: Invalid client/);
    expect(refused.hint).toMatch(/--sasl-oauth-client-id, --sasl-oauth-client-secret-file/);
    expect(`${refused.message} ${refused.hint}`).not.toContain('s3cret');

    reply = () => ({ status: 503, body: 'down' });
    expect(await oidcTokenSource(oidc(), 5_000)().catch((e: unknown) => e)).toMatchObject({ code: 'KAFKA_AUTH_FAILED', retriable: true });

    // A port nothing listens on (fetch refuses well-known ones such as 9 outright).
    const spare = createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const closed = (await oidcTokenSource({ ...oidc(), tokenEndpoint: `http://127.0.0.1:${port}/token` }, 2_000)().catch((e: unknown) => e)) as OutboxTailError;
    expect(closed).toMatchObject({ code: 'KAFKA_AUTH_UNAVAILABLE', retriable: true });
    expect(closed.message).toBe(`the OAuth token endpoint http://127.0.0.1:${port}/token is unreachable (ECONNREFUSED)`);
  });

  it('builds the OAUTHBEARER settings from the options, and refuses incomplete ones', () => {
    const c = resolveConfig({
      flags: {
        slot: 's',
        saslMechanism: 'oauthbearer',
        saslOauthTokenEndpoint: 'https://idp.example/realms/kafka/protocol/openid-connect/token',
        saslOauthClientId: 'relay',
        saslOauthClientSecret: 'x',
        saslOauthExtensions: 'logicalCluster=lkc-1,identityPoolId=pool-2',
      },
    });
    expect(kafkaSecurity(c).sasl).toMatchObject({
      mechanism: 'oauthbearer',
      oidc: { clientId: 'relay', extensions: { logicalCluster: 'lkc-1', identityPoolId: 'pool-2' } },
    });
    expect(() => resolveConfig({ flags: { slot: 's', saslMechanism: 'oauthbearer' } })).toThrow(/--sasl-oauth-token-endpoint.*required/s);
    expect(() =>
      resolveConfig({
        flags: {
          slot: 's',
          saslMechanism: 'oauthbearer',
          saslOauthTokenEndpoint: 'https://i/t',
          saslOauthClientId: 'r',
          saslOauthClientSecret: 'x',
          saslOauthExtensions: 'auth=x',
        },
      }),
    ).toThrow(/letters-only key other than auth/);
    expect(kafkaSecurity(resolveConfig({ flags: { slot: 's', saslMechanism: 'aws-msk-iam', awsRegion: 'eu-west-1' } })).sasl).toEqual({
      mechanism: 'aws-msk-iam',
      region: 'eu-west-1',
    });
  });
});

describe('AWS MSK IAM tokens (aws-msk-iam-sasl-signer-js; not tested against MSK)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is a presigned kafka-cluster:Connect URL for the region, signed with the default credential chain, with an expiry and a user agent', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAOUTBOXTAILTEST');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-a-real-secret');
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    const before = Date.now();
    const token = await mskIamTokenSource('eu-west-1')();
    const url = new URL(Buffer.from(token.value, 'base64url').toString('utf8'));
    expect(url.host).toBe('kafka.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('Action')).toBe('kafka-cluster:Connect');
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIAOUTBOXTAILTEST\/\d{8}\/eu-west-1\/kafka-cluster\/aws4_request$/);
    expect(Number(url.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(0);
    expect(url.searchParams.get('User-Agent')).toMatch(/^aws-msk-iam-sasl-signer-js\//);
    expect(token.expiresAt).toBeGreaterThan(before);
  });

  it('without a region it names the option', async () => {
    vi.stubEnv('AWS_REGION', '');
    vi.stubEnv('AWS_DEFAULT_REGION', '');
    await expect(mskIamTokenSource(undefined)()).rejects.toThrow(/aws-msk-iam needs a region/);
  });
});
