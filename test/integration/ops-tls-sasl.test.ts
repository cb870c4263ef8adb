/**
 * Secure connections for real, on a stack of its own (native provider):
 * PostgreSQL with TLS (a CA made here, server certificate for 127.0.0.1, client
 * certificates required for the relay role) and a Kafka SASL_SSL listener with
 * SCRAM credentials added at format time. The relay runs as the role made by
 * docker/least-privilege.sql, with sslmode verify-full and SCRAM-SHA-256, its
 * secrets read from files. Then: wrong CA, wrong host name, no TLS, wrong SASL
 * password (a clear error, no retry loop); and a broker frozen mid-stream makes
 * /healthz report a stall, which clears once the broker is back.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/resolve-config.js';
import { OutboxTailError } from '../../src/shared/outbox-tail-error.js';
import { pgConnection } from '../../src/postgres/pg-connection.js';
import { KafkaSink } from '../../src/sink/kafkajs/kafka-sink.js';
import { kafkaSinkOptions } from '../../src/kafka/kafka-client-options.js';
import { startStack, type StackHandle } from '../../dev/stack/index.js';
import { freePort } from '../../dev/stack/process.js';
import { createTestDatabase, uniqueName, withDatabase, type TestDatabase } from '../support/database.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { createSlot, query } from '../support/slot.js';
import { runCli } from '../support/run-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RELAY_ROLE = 'outbox_tail';
const PG_PASSWORD = 'pg-Pa55word-from-file';
const SCRAM_USER = 'relay';
const SCRAM_PASSWORD = 'scram-Pa55word-from-file';

const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-tls-'));
const path = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

/** A CA, and certificates it signs: server (SAN IP:127.0.0.1 only) and the relay role's client certificate. */
function makeCertificates(): void {
  chmodSync(dir, 0o755); // the postgres user reads its files from here
  for (const ca of ['ca', 'rogue-ca']) {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.pem`,
      '-days',
      '2',
      '-subj',
      `/CN=outbox-tail test ${ca}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  }
  const sign = (name: string, subject: string, ext: string) => {
    writeFileSync(path(`${name}.ext`), ext);
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  };
  sign(
    'server',
    '/CN=127.0.0.1',
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  sign('client', `/CN=${RELAY_ROLE}`, 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  // Kafka's PEM keystore: PKCS#8 key + certificate in one file
  openssl('pkcs8', '-topk8', '-nocrypt', '-in', 'server.key', '-out', 'server.pk8');
  writeFileSync(path('kafka-keystore.pem'), execFileSync('cat', [path('server.pk8'), path('server.pem')]));
  writeFileSync(
    path('pg_hba.conf'),
    [
      'local all all trust',
      `hostssl all ${RELAY_ROLE} 127.0.0.1/32 scram-sha-256 clientcert=verify-full`,
      `hostnossl all ${RELAY_ROLE} 127.0.0.1/32 reject`,
      'host all postgres 127.0.0.1/32 trust',
      'host replication postgres 127.0.0.1/32 trust',
      '',
    ].join('\n'),
  );
  // the server's files belong to the postgres user, the key 0600 (Postgres insists)
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const f of ['server.pem', 'server.key', 'ca.pem', 'pg_hba.conf']) chownSync(path(f), uid, gid);
  }
  chmodSync(path('server.key'), 0o600);
  chmodSync(path('client.key'), 0o600);
  writeFileSync(path('sasl-password'), `${SCRAM_PASSWORD}\n`, { mode: 0o600 });
  writeFileSync(path('wrong-sasl-password'), 'not-the-password\n', { mode: 0o600 });
}

let stack: StackHandle;
let db: TestDatabase;
let saslBrokers: string[];
let saslPlaintextBrokers: string[];
let relayUrl: string;
const relays: RelayProcess[] = [];
const collectors: KafkaCollector[] = [];
/** Reads topics back over the broker's plaintext listener (the test's own client); creates them first. */
const collect = async (topic: string) => {
  const c = await new KafkaCollector(stack.brokers).start([topic]);
  collectors.push(c);
  return c;
};

/** The relay's environment: everything through OUTBOX_TAIL_*, secrets through *_FILE. */
function secureEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    OUTBOX_TAIL_DATABASE_URL_FILE: path('database-url'),
    OUTBOX_TAIL_PG_SSLMODE: 'verify-full',
    OUTBOX_TAIL_PG_SSLROOTCERT: path('ca.pem'),
    OUTBOX_TAIL_PG_SSLCERT: path('client.pem'),
    OUTBOX_TAIL_PG_SSLKEY: path('client.key'),
    OUTBOX_TAIL_KAFKA_SSL: 'true',
    OUTBOX_TAIL_KAFKA_SSL_CA: path('ca.pem'),
    OUTBOX_TAIL_SASL_MECHANISM: 'scram-sha-256',
    OUTBOX_TAIL_SASL_USERNAME: SCRAM_USER,
    OUTBOX_TAIL_SASL_PASSWORD_FILE: path('sasl-password'),
    ...overrides,
  };
}

function start(slot: string, env: Record<string, string>): RelayProcess {
  // databaseUrl/brokers are overridden by the env: the URL comes from the file, the brokers are the SASL_SSL listener
  const relay = startRelay({
    databaseUrl: '',
    brokers: saslBrokers,
    slot,
    env: { OUTBOX_TAIL_DATABASE_URL: '', OUTBOX_TAIL_BROKERS: saslBrokers.join(','), ...env },
  });
  relays.push(relay);
  return relay;
}

beforeAll(async () => {
  makeCertificates();
  stack = await startStack({
    provider: 'native',
    postgresSettings: {
      ssl: 'on',
      ssl_cert_file: path('server.pem'),
      ssl_key_file: path('server.key'),
      ssl_ca_file: path('ca.pem'),
      hba_file: path('pg_hba.conf'),
      password_encryption: 'scram-sha-256',
    },
    kafkaExtraListeners: { SASL_SSL: 'SASL_SSL', SASL_PLAINTEXT: 'SASL_PLAINTEXT' },
    kafkaFormatArgs: [
      '--add-scram',
      `SCRAM-SHA-256=[name=${SCRAM_USER},password=${SCRAM_PASSWORD}]`,
      '--add-scram',
      `SCRAM-SHA-512=[name=relay512,password=${SCRAM_PASSWORD}-512]`,
    ],
    kafkaSettings: {
      'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
      'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_plainuser="${SCRAM_PASSWORD}-plain";`,
      'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'SCRAM-SHA-256',
      'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.ssl.keystore.type': 'PEM',
      'listener.name.sasl_ssl.ssl.keystore.location': path('kafka-keystore.pem'),
    },
  });
  saslBrokers = stack.kafkaListeners!.SASL_SSL!;
  saslPlaintextBrokers = stack.kafkaListeners!.SASL_PLAINTEXT!;
  db = await createTestDatabase(stack);
  // the least-privilege role, made by the shipped script, run as the table owner
  const psql = spawnSync('psql', [db.url, '-v', `relay_password=${PG_PASSWORD}`, '-f', `${ROOT}docker/least-privilege.sql`], { encoding: 'utf8' });
  expect(psql.status, `${psql.stdout}\n${psql.stderr}`).toBe(0);
  const u = new URL(withDatabase(stack.databaseUrl, db.name));
  u.username = RELAY_ROLE;
  u.password = PG_PASSWORD;
  relayUrl = u.toString();
  writeFileSync(path('database-url'), `${relayUrl}\n`, { mode: 0o600 });
});

afterAll(async () => {
  const pid = stack?.kafka.pid();
  if (pid) process.kill(pid, 'SIGCONT');
  await Promise.all(relays.map((r) => r.kill('SIGKILL')));
  await Promise.all(collectors.map((c) => c.stop()));
  await db?.drop();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('PostgreSQL TLS (verify-full) and Kafka SASL_SSL + SCRAM', () => {
  it('the least-privilege role can replicate and owns nothing', async () => {
    const [role] = await query<{ rolreplication: boolean; rolsuper: boolean; rolcreatedb: boolean; rolcreaterole: boolean; owned: number }>(
      db.url,
      `select rolreplication, rolsuper, rolcreatedb, rolcreaterole,
              (select count(*)::int from pg_class where relowner = r.oid) + (select count(*)::int from pg_publication where pubowner = r.oid) as owned
         from pg_roles r where rolname = $1`,
      [RELAY_ROLE],
    );
    expect(role).toEqual({ rolreplication: true, rolsuper: false, rolcreatedb: false, rolcreaterole: false, owned: 0 });
  });

  it('relays rows over TLS to both servers, as the least-privilege role, with secrets from files', async () => {
    const slot = uniqueName('ops_tls');
    const type = uniqueName('tls');
    await createSlot(db.url, slot);
    const collector = await collect(`outbox.event.${type}`);
    const port = await freePort();
    const relay = start(slot, secureEnv({ OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}` }));
    await relay.waitForLog(isStreaming, 60_000);
    await query(
      db.url,
      `insert into outbox (aggregate_type, aggregate_id, event_type, payload) select $1, 'a' || g, 'E', jsonb_build_object('g', g) from generate_series(1, 5) g`,
      [type],
    );
    await collector.waitForDistinct(5);
    expect(collector.records.map((r) => r.key).sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);

    // every connection of the relay role is TLS with its client certificate: the walsender and the normal ones
    const conns = await query<{ ssl: boolean; client_dn: string | null; backend_type: string }>(
      stack.databaseUrl,
      `select s.ssl, s.client_dn, a.backend_type from pg_stat_activity a join pg_stat_ssl s using (pid) where a.usename = $1`,
      [RELAY_ROLE],
    );
    expect(conns.map((c) => c.backend_type)).toContain('walsender');
    expect(conns.every((c) => c.ssl && c.client_dn === `/CN=${RELAY_ROLE}`)).toBe(true);

    // secrets appear nowhere: logs, stderr, metrics
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const everything = `${JSON.stringify(relay.logs)}\n${relay.stderr()}\n${metrics}`;
    expect(everything).not.toContain(PG_PASSWORD);
    expect(everything).not.toContain(SCRAM_PASSWORD);
    const startLine = relay.logs.find((l) => l.event === 'start')!;
    expect(startLine.config).toMatchObject({ pgSslmode: 'verify-full', saslMechanism: 'scram-sha-256', databaseUrl: expect.stringContaining(':***@') });
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  });

  it('verify-full refuses a server certificate from another CA, a host name not in the certificate, and no TLS is rejected', async () => {
    const tryConnect = async (overrides: Parameters<typeof pgConnection>[0]) => {
      const client = new pg.Client(pgConnection(overrides));
      client.on('error', () => undefined);
      try {
        await client.connect();
        return (await client.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()')).rows[0]!.ssl ? 'tls' : 'plain';
      } catch (error) {
        return `${(error as NodeJS.ErrnoException).code ?? ''} ${(error as Error).message}`;
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    const tls = { connectTimeoutMs: 5_000, pgSslcert: path('client.pem'), pgSslkey: path('client.key') };
    expect(await tryConnect({ ...tls, databaseUrl: relayUrl, pgSslmode: 'verify-full', pgSslrootcert: path('ca.pem') })).toBe('tls');
    expect(await tryConnect({ ...tls, databaseUrl: relayUrl, pgSslmode: 'verify-full', pgSslrootcert: path('rogue-ca.pem') })).toMatch(
      /SELF_SIGNED_CERT_IN_CHAIN|unable to verify|self-signed/i,
    );
    const byName = relayUrl.replace('127.0.0.1', 'localhost');
    expect(await tryConnect({ ...tls, databaseUrl: byName, pgSslmode: 'verify-full', pgSslrootcert: path('ca.pem') })).toMatch(
      /ERR_TLS_CERT_ALTNAME_INVALID|does not match|not in the cert/i,
    );
    // verify-ca checks the chain only: the same host name passes
    expect(await tryConnect({ ...tls, databaseUrl: byName, pgSslmode: 'verify-ca', pgSslrootcert: path('ca.pem') })).toBe('tls');
    expect(await tryConnect({ ...tls, databaseUrl: relayUrl, pgSslmode: 'disable' })).toMatch(/pg_hba\.conf rejects connection|no encryption/i);
    // without the client certificate the server refuses (clientcert=verify-full)
    expect(await tryConnect({ connectTimeoutMs: 5_000, databaseUrl: relayUrl, pgSslmode: 'verify-full', pgSslrootcert: path('ca.pem') })).toMatch(
      /certificate|28000/i,
    );
  });

  it('the relay refuses to start when the server certificate does not verify, naming the problem', async () => {
    const relay = start(uniqueName('ops_badca'), secureEnv({ OUTBOX_TAIL_PG_SSLROOTCERT: path('rogue-ca.pem') }));
    const { code } = await relay.exited;
    expect(code).toBe(3);
    expect(relay.stderr()).toMatch(/cannot connect to PostgreSQL at 127\.0\.0\.1:\d+\/\w+: self-signed certificate in certificate chain/);
    expect(relay.stderr()).not.toContain(PG_PASSWORD);
  });

  it('--pg-sslmode verify-ca without --pg-sslrootcert is a config error naming the fix; the relay never connects', async () => {
    const env = secureEnv({ OUTBOX_TAIL_PG_SSLMODE: 'verify-ca' });
    delete env.OUTBOX_TAIL_PG_SSLROOTCERT;
    const relay = start(uniqueName('ops_verifyca'), env);
    expect((await relay.exited).code).toBe(2);
    expect(relay.stderr()).toMatch(/verify-ca needs --pg-sslrootcert <the CA file the server certificate chains to> \(as libpq does\)/);
    expect(relay.logs.some((l) => l.event === 'preflight' || l.event === 'streaming')).toBe(false);
  });

  it('--pg-sslmode require relays over TLS without verifying the server, and says so at start', async () => {
    const slot = uniqueName('ops_require');
    const type = uniqueName('req');
    await createSlot(db.url, slot);
    const collector = await collect(`outbox.event.${type}`);
    // no root certificate: the test CA is in no trust store, so only an unverified connection gets through
    const env = secureEnv({ OUTBOX_TAIL_PG_SSLMODE: 'require' });
    delete env.OUTBOX_TAIL_PG_SSLROOTCERT;
    const relay = start(slot, env);
    await relay.waitForLog(isStreaming, 60_000);
    await query(db.url, `insert into outbox (aggregate_type, aggregate_id, event_type, payload) values ($1, 'r1', 'E', '{}')`, [type]);
    await collector.waitForDistinct(1);
    const warning = relay.logs.find((l) => l.event === 'insecure-transport');
    expect(warning, 'a warning that the server is not verified').toMatchObject({
      level: 'warn',
      msg: expect.stringContaining('--pg-sslmode require encrypts but does not verify the server'),
      fix: expect.stringContaining('--pg-sslmode verify-full --pg-sslrootcert'),
    });
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  });

  it('SASL SCRAM on a listener without TLS relays, with a warning that the session and records cross in clear', async () => {
    const slot = uniqueName('ops_scram_clear');
    const type = uniqueName('clear');
    await createSlot(db.url, slot);
    const collector = await collect(`outbox.event.${type}`);
    const env = secureEnv({ OUTBOX_TAIL_BROKERS: saslPlaintextBrokers.join(',') });
    delete env.OUTBOX_TAIL_KAFKA_SSL;
    delete env.OUTBOX_TAIL_KAFKA_SSL_CA;
    const relay = start(slot, env);
    await relay.waitForLog(isStreaming, 60_000);
    await query(db.url, `insert into outbox (aggregate_type, aggregate_id, event_type, payload) values ($1, 'c1', 'E', '{}')`, [type]);
    await collector.waitForDistinct(1);
    const warnings = relay.logs.filter((l) => l.event === 'insecure-transport');
    expect(warnings.map((w) => w.msg)).toEqual([expect.stringMatching(/^Kafka: SASL SCRAM without TLS/)]);
    expect(warnings[0]).toMatchObject({ fix: expect.stringContaining('--kafka-ssl') });
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  });

  it('doctor reports the TLS of both connections: what was negotiated and what is verified', async () => {
    const doctor = async (env: Record<string, string>) => {
      const result = await runCli(['doctor', '--json', '--wal-sample', '1s'], {
        OUTBOX_TAIL_SLOT: uniqueName('ops_doctor'),
        OUTBOX_TAIL_BROKERS: saslBrokers.join(','),
        ...env,
      });
      expect(result.stdout, result.stderr).toMatch(/^\{/);
      const report = JSON.parse(result.stdout) as { checks: { check: string; status: string; found: string; fix: string | null }[] };
      const failed = report.checks.filter((c) => c.check.endsWith(' connection'));
      expect(failed, 'doctor reached both servers').toEqual([]);
      return Object.fromEntries(report.checks.filter((c) => c.check.endsWith(' TLS')).map((c) => [c.check, c]));
    };
    const verified = await doctor(secureEnv());
    expect(verified['postgres TLS']).toMatchObject({
      status: 'ok',
      found: expect.stringMatching(/^TLSv1\.[23] \S+; TLS, chain checked against CA .*ca\.pem and host name checked \(verify-full\)$/),
    });
    expect(verified['kafka TLS']).toMatchObject({
      status: 'ok',
      found: expect.stringMatching(/^TLS, chain checked against CA .*ca\.pem and host name checked, SASL scram-sha-256$/),
    });
    const unverifiedEnv = secureEnv({ OUTBOX_TAIL_PG_SSLMODE: 'require', OUTBOX_TAIL_BROKERS: saslPlaintextBrokers.join(',') });
    delete unverifiedEnv.OUTBOX_TAIL_PG_SSLROOTCERT;
    delete unverifiedEnv.OUTBOX_TAIL_KAFKA_SSL;
    delete unverifiedEnv.OUTBOX_TAIL_KAFKA_SSL_CA;
    const unverified = await doctor(unverifiedEnv);
    expect(unverified['postgres TLS']).toMatchObject({ status: 'warn', found: expect.stringMatching(/^TLSv1\.[23] .*server not verified/) });
    expect(unverified['kafka TLS']).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('SCRAM without TLS'),
      fix: expect.stringContaining('--kafka-ssl'),
    });
  });

  it('SCRAM-SHA-512 and PLAIN work too; a wrong password is KAFKA_AUTH_FAILED, not retriable', async () => {
    const logger = pino({ level: 'silent' });
    const send = async (env: Record<string, string>) => {
      const config = resolveConfig({ env: { ...secureEnv(), OUTBOX_TAIL_SLOT: 'x', OUTBOX_TAIL_BROKERS: saslBrokers.join(','), ...env } });
      const sink = new KafkaSink(kafkaSinkOptions(config, logger));
      try {
        await sink.connect();
        await sink.send([{ topic: uniqueName('ops_sasl'), key: 'k', value: Buffer.from('v'), headers: {}, bytes: 2 }]);
        return 'ok';
      } finally {
        await sink.disconnect();
      }
    };
    expect(await send({})).toBe('ok');
    writeFileSync(path('pw-512'), `${SCRAM_PASSWORD}-512`);
    expect(
      await send({ OUTBOX_TAIL_SASL_MECHANISM: 'scram-sha-512', OUTBOX_TAIL_SASL_USERNAME: 'relay512', OUTBOX_TAIL_SASL_PASSWORD_FILE: path('pw-512') }),
    ).toBe('ok');
    writeFileSync(path('pw-plain'), `${SCRAM_PASSWORD}-plain`);
    expect(await send({ OUTBOX_TAIL_SASL_MECHANISM: 'plain', OUTBOX_TAIL_SASL_USERNAME: 'plainuser', OUTBOX_TAIL_SASL_PASSWORD_FILE: path('pw-plain') })).toBe(
      'ok',
    );
    const wrong = await send({ OUTBOX_TAIL_SASL_PASSWORD_FILE: path('wrong-sasl-password') }).catch((e: unknown) => e);
    expect(OutboxTailError.is(wrong)).toBe(true);
    expect(wrong).toMatchObject({ code: 'KAFKA_AUTH_FAILED', retriable: false });
    expect((wrong as OutboxTailError).describe()).toMatch(
      /invalid credentials with SASL mechanism SCRAM-SHA-256.*Fix: check the SASL mechanism, user and password/,
    );
  });

  it('a relay with a wrong SASL password exits with a clear error instead of retrying', async () => {
    const slot = uniqueName('ops_badpw');
    await createSlot(db.url, slot);
    const relay = start(slot, secureEnv({ OUTBOX_TAIL_SASL_PASSWORD_FILE: path('wrong-sasl-password') }));
    const { code } = await relay.exited;
    expect(code).toBe(3);
    expect(relay.stderr()).toMatch(/KAFKA_AUTH_FAILED: .*SASL SCRAM SHA256 authentication failed.*Fix: check the SASL mechanism, user and password/);
    expect(relay.logs.filter((l) => l.event === 'restart')).toEqual([]);
    expect(`${relay.stderr()}${JSON.stringify(relay.logs)}`).not.toContain('not-the-password');
  });

  it('a broker frozen mid-stream makes /healthz report a stall with the reason; it clears when the broker is back', async () => {
    const slot = uniqueName('ops_stall');
    const type = uniqueName('stall');
    await createSlot(db.url, slot);
    const collector = await collect(`outbox.event.${type}`);
    const port = await freePort();
    const relay = start(
      slot,
      secureEnv({ OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}`, OUTBOX_TAIL_STALL_TIMEOUT_MS: '2000', OUTBOX_TAIL_SLOT_POLL_INTERVAL_MS: '200' }),
    );
    await relay.waitForLog(isStreaming, 60_000);
    const insert = () =>
      query(db.url, `insert into outbox (aggregate_type, aggregate_id, event_type, payload) values ($1, 'k', 'E', '{"pad": "${'x'.repeat(2000)}"}')`, [type]);
    await insert();
    await collector.waitForDistinct(1);
    const health = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
    };
    expect((await health()).status).toBe(200);

    const pid = stack.kafka.pid()!;
    process.kill(pid, 'SIGSTOP');
    let stalled: { status: number; body: { status: string; reason?: string } } | undefined;
    try {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        await insert(); // WAL grows, nothing can be confirmed
        const h = await health();
        if (h.status === 503) {
          stalled = h;
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(stalled?.body).toMatchObject({
      status: 'unhealthy',
      reason: expect.stringMatching(/^no confirm for \d+ s while the slot lag grew from \d+ to \d+ bytes \(state \w+\)$/),
    });
    const stallLog = await relay.waitForLog((l) => l.event === 'stall');
    expect(stallLog).toMatchObject({ level: 'error', code: 'STALLED', component: 'slot-monitor', slot });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^outbox_tail_stalled 1$/m);

    await relay.waitForLog((l) => l.event === 'stall-cleared', 90_000);
    expect((await health()).status).toBe(200);
    // and nothing was lost: every row inserted while frozen reached Kafka
    const [{ n }] = (await query<{ n: number }>(db.url, 'select count(*)::int as n from outbox where aggregate_type = $1', [type])) as [{ n: number }];
    await collector.waitForDistinct(n, 90_000);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^outbox_tail_stalled 0$/m);
  });
});
