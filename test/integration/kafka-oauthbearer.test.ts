/**
 * --sasl-mechanism oauthbearer against real servers started here: Keycloak
 * (bin/setup-keycloak.sh; a realm whose client-credentials tokens live 30 s)
 * and a Kafka broker with an OAUTHBEARER listener that validates the tokens
 * against Keycloak's JWKS and ends every session after at most 20 s
 * (connections.max.reauth.ms). The relay runs past several token lifetimes
 * under a writer: every row arrives and the broker's log shows the
 * re-authentications. Its negative control, a relay that never gets a new
 * token, stops delivering once its token has expired.
 */
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaTool } from '../../dev/bench/topic-bytes.js';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import { freePort, guardServer, type Guard } from '../../dev/stack/process.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { createSlot, query } from '../support/slot.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const CLIENT_SECRET = 'outbox-tail-oauth-secret';
const TOKEN_SECONDS = 20;

let keycloak: ChildProcess | null = null;
let keycloakDir = '';
let keycloakGuard: Guard | undefined;
let stack: StackHandle;
let db: TestDatabase;
let realmUrl = '';
const dir = join(tmpdir(), uniqueName('outbox-tail-oauth-'));
const relays: RelayProcess[] = [];
const collectors: KafkaCollector[] = [];

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const home = execFileSync('bash', [`${ROOT}bin/setup-keycloak.sh`], { encoding: 'utf8' }).trim();
  // A fresh database each run: --import-realm skips a realm that exists, and the fixture must be the realm used.
  rmSync(join(home, 'data', 'h2'), { recursive: true, force: true });
  mkdirSync(join(home, 'data', 'import'), { recursive: true });
  copyFileSync(`${ROOT}test/fixtures/keycloak/kafka-realm.json`, join(home, 'data', 'import', 'kafka-realm.json'));
  const port = await freePort();
  realmUrl = `http://127.0.0.1:${port}/realms/kafka`;
  keycloak = spawn(`${home}/bin/kc.sh`, ['start-dev', '--http-port', String(port), '--http-host', '127.0.0.1', '--import-realm'], {
    env: { ...process.env, KC_BOOTSTRAP_ADMIN_USERNAME: 'admin', KC_BOOTSTRAP_ADMIN_PASSWORD: 'admin' },
    stdio: ['ignore', 'ignore', 'ignore'],
    detached: true,
  });
  // Detached (its own process group, so one signal reaches kc.sh's JVM): if this worker dies without afterAll, the
  // stack's watchdog kills the group and removes the pid dir.
  keycloakDir = mkdtempSync(join(tmpdir(), 'outbox-tail-keycloak-'));
  writeFileSync(join(keycloakDir, '.pid'), String(keycloak.pid));
  keycloakGuard = guardServer(keycloakDir, () => keycloak?.pid);
  const t0 = Date.now();
  for (;;) {
    if (
      await fetch(`${realmUrl}/.well-known/openid-configuration`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() - t0 > 240_000) throw new Error('Keycloak was not ready within 240 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`keycloak ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // The realm is the fixture's: its tokens live TOKEN_SECONDS.
  const answer = await fetch(`${realmUrl}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`outbox-tail:${CLIENT_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  // Keycloak computes expires_in as exp - now in whole seconds: a second boundary between issuing and answering gives
  // TOKEN_SECONDS - 1 (seen once in CI). A realm from an earlier run would say Keycloak's default, 300.
  const expiresIn = ((await answer.json()) as { expires_in?: number }).expires_in;
  expect(expiresIn, "the fixture realm's token lifetime").toBeGreaterThanOrEqual(TOKEN_SECONDS - 2);
  expect(expiresIn, "the fixture realm's token lifetime").toBeLessThanOrEqual(TOKEN_SECONDS);
  stack = await startStack({
    provider: 'native',
    kafkaExtraListeners: { OAUTH: 'SASL_PLAINTEXT' },
    kafkaSettings: {
      'connections.max.reauth.ms': '20000',
      'listener.name.oauth.sasl.enabled.mechanisms': 'OAUTHBEARER',
      'listener.name.oauth.oauthbearer.sasl.server.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
      'listener.name.oauth.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;',
      'listener.name.oauth.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': `${realmUrl}/protocol/openid-connect/certs`,
      'listener.name.oauth.oauthbearer.sasl.oauthbearer.expected.issuer': realmUrl,
    },
  });
  db = await createTestDatabase(stack);
  writeFileSync(join(dir, 'client-secret'), `${CLIENT_SECRET}\n`, { mode: 0o600 });
}, 420_000);

afterAll(async () => {
  await Promise.all(relays.map((r) => r.kill('SIGKILL')));
  await Promise.all(collectors.map((c) => c.stop()));
  await db?.drop();
  await stack?.stop();
  if (keycloak?.pid) {
    try {
      process.kill(-keycloak.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  keycloakGuard?.release();
  if (keycloakDir) rmSync(keycloakDir, { recursive: true, force: true });
});

function relay(slot: string, variant?: RelayVariant): RelayProcess {
  const r = startRelay({
    databaseUrl: db.url,
    brokers: stack.kafkaListeners!.OAUTH!,
    slot,
    env: {
      OUTBOX_TAIL_SASL_MECHANISM: 'oauthbearer',
      OUTBOX_TAIL_SASL_OAUTH_TOKEN_ENDPOINT: `${realmUrl}/protocol/openid-connect/token`,
      OUTBOX_TAIL_SASL_OAUTH_CLIENT_ID: 'outbox-tail',
      OUTBOX_TAIL_SASL_OAUTH_CLIENT_SECRET_FILE: join(dir, 'client-secret'),
      OUTBOX_TAIL_ALLOW_AUTO_TOPIC_CREATION: 'true',
    },
    ...(variant ? { variant } : {}),
  });
  relays.push(r);
  return r;
}

/** Writes one row every 200 ms for `seconds`; returns the aggregate ids written. */
async function writeFor(type: string, seconds: number): Promise<string[]> {
  const ids: string[] = [];
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    await query(db.url, `insert into outbox (aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', '{}')`, [type, `k${i}`]);
    ids.push(`k${i}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return ids;
}

/** Re-authentications the broker completed since the start of the stack (its debug log, switched on below). */
function reauthentications(): number {
  const kafkaDir = stack.workDirs.find((d) => /outbox-tail-kafka-/.test(d))!;
  return readFileSync(join(kafkaDir, 'kafka-server.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('Set SASL server state to REAUTH_PROCESS_HANDSHAKE during re-authentication')).length;
}

describe('Kafka SASL/OAUTHBEARER with OIDC client credentials (Keycloak)', () => {
  it(`relays every row through several ${TOKEN_SECONDS} s token lifetimes, re-authenticating with fresh tokens`, async () => {
    const slot = uniqueName('oauth');
    const type = uniqueName('oauth');
    await createSlot(db.url, slot);
    const collector = await new KafkaCollector(stack.brokers).start([`outbox.event.${type}`]);
    collectors.push(collector);
    const r = relay(slot);
    await r.waitForLog(isStreaming, 60_000);
    // The broker logs each authentication at debug level: switched on now that its authenticator logger exists.
    await kafkaTool('kafka.admin.ConfigCommand', [
      '--bootstrap-server',
      stack.brokers.join(','),
      '--alter',
      '--entity-type',
      'broker-loggers',
      '--entity-name',
      '1',
      '--add-config',
      'org.apache.kafka.common.security.authenticator.SaslServerAuthenticator=DEBUG',
    ]);
    const ids = await writeFor(type, 2.5 * TOKEN_SECONDS);
    await collector.waitForDistinct(ids.length, 60_000);
    const keys = new Set(collector.records.map((rec) => rec.key));
    expect(
      ids.filter((k) => !keys.has(k)),
      'rows lost',
    ).toEqual([]);
    const reauths = reauthentications();
    console.log(`oauthbearer: ${ids.length} rows in ${2.5 * TOKEN_SECONDS} s, ${reauths} re-authentications at the broker`);
    expect(reauths, 'the broker re-authenticated the relay’s connections').toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(r.logs) + r.stderr()).not.toContain(CLIENT_SECRET);
  }, 300_000);

  it('negative control: a relay that never gets a new token stops delivering once its token has expired (loses at least one row)', async () => {
    const slot = uniqueName('oauth_stale');
    const type = uniqueName('oauth_stale');
    await createSlot(db.url, slot);
    const collector = await new KafkaCollector(stack.brokers).start([`outbox.event.${type}`]);
    collectors.push(collector);
    const r = relay(slot, 'token-never-refreshed');
    await r.waitForLog(isStreaming, 60_000);
    const ids = await writeFor(type, 1.5 * TOKEN_SECONDS);
    await collector.waitForDistinct(ids.length, 15_000).catch(() => undefined);
    const keys = new Set(collector.records.map((rec) => rec.key));
    const missing = ids.filter((k) => !keys.has(k));
    console.log(`token-never-refreshed: ${missing.length} of ${ids.length} rows not delivered`);
    expect(missing.length).toBeGreaterThan(0);
  }, 300_000);
});
