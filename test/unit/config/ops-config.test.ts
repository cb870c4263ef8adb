import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../support/temp-dir.js';
import { main } from '../../../src/cli/main.js';
import { envName, flagName } from '../../../src/config/options.js';
import { redactConfig, resolveConfig } from '../../../src/config/resolve-config.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { createLogger } from '../../../src/shared/create-logger.js';
import { pgConnection } from '../../../src/postgres/pg-connection.js';
import { kafkaSecurity } from '../../../src/kafka/kafka-security.js';

const dir = tempDir('outbox-tail-ops-config-');
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(OutboxTailError.is(error)).toBe(true);
    return (error as OutboxTailError).message;
  }
  throw new Error('expected a config error');
}

describe('operations options', () => {
  it('names every new option by the flag and env conventions', () => {
    expect(flagName('metricsListen')).toBe('metrics-listen');
    expect(envName('metricsListen')).toBe('OUTBOX_TAIL_METRICS_LISTEN');
    expect(flagName('stallTimeoutMs')).toBe('stall-timeout-ms');
    expect(flagName('databaseUrlFile')).toBe('database-url-file');
    expect(flagName('saslPasswordFile')).toBe('sasl-password-file');
    expect(envName('pgSslmode')).toBe('OUTBOX_TAIL_PG_SSLMODE');
    expect(envName('kafkaSslCa')).toBe('OUTBOX_TAIL_KAFKA_SSL_CA');
  });

  it('defaults the metrics endpoint to loopback, never 0.0.0.0', () => {
    const c = resolveConfig({});
    expect(c.metricsListen).toBe('127.0.0.1:9464');
    expect(c.stallTimeoutMs).toBe(120_000);
    expect(c.kafkaSsl).toBe(false);
    expect(resolveConfig({ env: { OUTBOX_TAIL_METRICS_LISTEN: '[::1]:9000' } }).metricsListen).toBe('[::1]:9000');
    expect(resolveConfig({ flags: { metricsListen: 'off' } }).metricsListen).toBe('off');
    expect(configError(() => resolveConfig({ flags: { metricsListen: '9464' } }))).toMatch(
      /--metrics-listen \/ OUTBOX_TAIL_METRICS_LISTEN: expected host:port/,
    );
  });

  it('reads secrets from files, trimmed, and refuses a value and a file together', () => {
    const url = file('db-url', 'postgres://relay:s3cret@db:5432/app\n');
    const pw = file('sasl', 'kafka-s3cret\n');
    const c = resolveConfig({ flags: { databaseUrlFile: url, saslPasswordFile: pw, saslMechanism: 'scram-sha-512', saslUsername: 'relay' } });
    expect(c.databaseUrl).toBe('postgres://relay:s3cret@db:5432/app');
    expect(c.saslPassword).toBe('kafka-s3cret');
    expect(configError(() => resolveConfig({ env: { DATABASE_URL: 'postgres://x/y' }, flags: { databaseUrlFile: url } }))).toMatch(
      /give either databaseUrl or databaseUrlFile/,
    );
    const missing = configError(() => resolveConfig({ env: { OUTBOX_TAIL_SASL_PASSWORD_FILE: join(dir, 'nope') } }));
    expect(missing).toMatch(/--sasl-password-file \/ OUTBOX_TAIL_SASL_PASSWORD_FILE: cannot read .*nope: ENOENT/);
  });

  it('requires the SASL user and password with a mechanism, and TLS cert with key', () => {
    expect(configError(() => resolveConfig({ flags: { saslMechanism: 'plain' } }))).toMatch(/saslUsername.*required|--sasl-username/);
    expect(configError(() => resolveConfig({ flags: { saslMechanism: 'scram-sha-256', saslUsername: 'u' } }))).toMatch(
      /--sasl-password \/ OUTBOX_TAIL_SASL_PASSWORD: required/,
    );
    expect(configError(() => resolveConfig({ flags: { saslMechanism: 'gssapi', saslUsername: 'u', saslPassword: 'p' } }))).toMatch(/--sasl-mechanism/);
    expect(configError(() => resolveConfig({ flags: { pgSslcert: '/c.pem' } }))).toMatch(/--pg-sslkey/);
  });

  it('never logs a secret: config redaction plus logger redaction', () => {
    const c = resolveConfig({
      flags: { databaseUrl: 'postgres://relay:db-s3cret@db/app', saslMechanism: 'plain', saslUsername: 'relay', saslPassword: 'pass:word' },
    });
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((out += chunk.toString()), done()) });
    const logger = createLogger('info', sink);
    logger.info({ event: 'start', config: redactConfig(c) }, 'outbox-tail starting');
    logger.info({ sasl: { mechanism: 'plain', username: 'relay', password: 'pass:word' }, connectionString: 'postgres://relay:db-s3cret@db/app' }, 'x');
    expect(out).not.toContain('db-s3cret');
    expect(out).not.toContain('pass:word');
    const line = JSON.parse(out.split('\n')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', event: 'start', msg: 'outbox-tail starting' });
    expect(typeof line.time).toBe('string');
    expect((line.config as Record<string, unknown>).databaseUrl).toBe('postgres://relay:***@db/app');
  });
});

describe('PostgreSQL TLS settings', () => {
  const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
  const cert = file('client.pem', 'CERT');
  const key = file('client.key', 'KEY');
  const base = { connectTimeoutMs: 1000 };

  it('maps sslmode like libpq, and the options win over the URL', () => {
    const full = pgConnection({
      ...base,
      databaseUrl: 'postgres://u:p@db.internal/app?sslmode=disable&sslrootcert=/x',
      pgSslmode: 'verify-full',
      pgSslrootcert: ca,
      pgSslcert: cert,
      pgSslkey: key,
    });
    expect(full.connectionString).toBe('postgres://u:p@db.internal/app');
    expect(full.ssl).toMatchObject({ rejectUnauthorized: true, ca: expect.stringContaining('CA'), cert: 'CERT', key: 'KEY' });
    expect((full.ssl as { checkServerIdentity?: unknown }).checkServerIdentity).toBeUndefined();

    const verifyCa = pgConnection({ ...base, pgSslmode: 'verify-ca', pgSslrootcert: ca }).ssl as {
      rejectUnauthorized: boolean;
      checkServerIdentity: () => unknown;
    };
    expect(verifyCa.rejectUnauthorized).toBe(true);
    expect(verifyCa.checkServerIdentity()).toBeUndefined();

    expect(pgConnection({ ...base, pgSslmode: 'require' }).ssl).toEqual({ rejectUnauthorized: false });
    expect(pgConnection({ ...base, pgSslmode: 'disable' }).ssl).toBe(false);
    // no option: the URL's own sslmode applies (node-postgres parses it)
    const untouched = pgConnection({ ...base, databaseUrl: 'postgres://db/app?sslmode=verify-full' });
    expect(untouched.connectionString).toBe('postgres://db/app?sslmode=verify-full');
    expect(untouched.ssl).toBeUndefined();
    // a root CA alone means verify-full
    expect(pgConnection({ ...base, pgSslrootcert: ca }).ssl).toMatchObject({ rejectUnauthorized: true });
  });

  it('reports an unreadable certificate file as a config error naming the flag', () => {
    expect(configError(() => pgConnection({ ...base, pgSslmode: 'verify-full', pgSslrootcert: join(dir, 'missing.pem') }))).toMatch(
      /cannot read --pg-sslrootcert file .*missing\.pem: ENOENT/,
    );
  });
});

describe('Kafka TLS and SASL settings', () => {
  it('builds kafkajs ssl and sasl options', () => {
    const ca = file('kafka-ca.pem', 'KAFKA-CA');
    expect(kafkaSecurity({})).toEqual({});
    expect(kafkaSecurity({ kafkaSsl: true })).toEqual({ ssl: { rejectUnauthorized: true } });
    expect(kafkaSecurity({ kafkaSsl: true, kafkaSslCa: ca, saslMechanism: 'scram-sha-256', saslUsername: 'relay', saslPassword: 'pw' })).toEqual({
      ssl: { rejectUnauthorized: true, ca: 'KAFKA-CA' },
      sasl: { mechanism: 'scram-sha-256', username: 'relay', password: 'pw' },
    });
    expect(kafkaSecurity({ saslMechanism: 'plain', saslUsername: 'u', saslPassword: 'p' }).sasl).toEqual({ mechanism: 'plain', username: 'u', password: 'p' });
  });
});

describe('secrets on the command line', () => {
  afterEach(() => vi.restoreAllMocks());

  it('warns that --sasl-password and a password in --database-url are visible in ps, without echoing them', async () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
    const code = await main(['status', '--sasl-password=hunter2', '--database-url', 'postgres://u:db-pass@127.0.0.1:1/x']);
    expect(code).toBe(2); // no --slot: a config error, after the warnings
    expect(stderr).toMatch(/--sasl-password is visible in `ps`; use --sasl-password-file/);
    expect(stderr).toMatch(/a password in --database-url is visible in `ps`/);
    expect(stderr).not.toContain('hunter2');
    expect(stderr).not.toContain('db-pass');
  });
});

describe('values that may hold a secret (issue 42)', () => {
  const refusal = (sources: Parameters<typeof resolveConfig>[0]): string => {
    try {
      resolveConfig(sources);
    } catch (error) {
      expect(OutboxTailError.is(error) && error.code).toBe('CONFIG_INVALID');
      return (error as OutboxTailError).describe();
    }
    throw new Error('accepted');
  };

  it.each([
    ['without a scheme', 'u:s3cret@db:5432/x'],
    ['in keyword form', 'host=db password=s3cret'],
  ])('refuses a PostgreSQL URL %s, naming its source and showing no part of it', (_form, url) => {
    const message = refusal({ env: { DATABASE_URL: url } });
    expect(message).toMatch(/--database-url .*postgres:\/\/ or postgresql:\/\/ URL.*by env DATABASE_URL/s);
    expect(message).not.toContain('s3cret');
    expect(message).not.toContain('db');
  });

  it('refuses a --database-url-file holding a URL without a scheme, without quoting it', () => {
    const message = refusal({ flags: { databaseUrlFile: file('no-scheme-url', 'u:s3cret@db/x') } });
    expect(message).toMatch(/--database-url-file \/ OUTBOX_TAIL_DATABASE_URL_FILE: must hold a postgres:\/\//);
    expect(message).not.toContain('s3cret');
  });

  it('refuses a schema registry URL with a user and password, pointing to the registry username and password-file options', () => {
    const message = refusal({ flags: { schemaRegistryUrl: 'http://u:s3cret@registry:8081' } });
    expect(message).toMatch(/--schema-registry-username and --schema-registry-password-file/);
    expect(message).not.toContain('s3cret');
  });

  it('refuses an OAuth token endpoint with a user and password, pointing to the client id and secret options', () => {
    const message = refusal({ flags: { saslOauthTokenEndpoint: 'https://c:s3cret@idp/token' } });
    expect(message).toMatch(/--sasl-oauth-client-id and --sasl-oauth-client-secret-file/);
    expect(message).not.toContain('s3cret');
  });

  it('names the source of a secret given twice, not its values', () => {
    const message = refusal({ flags: { saslPassword: ['s3cret', 's3cret'] } });
    expect(message).toMatch(/--sasl-password .*given more than once.*by flag --sasl-password/s);
    expect(message).not.toContain('s3cret');
  });

  it('still shows a value that holds no secret', () => {
    expect(refusal({ flags: { logLevel: 'loud' } })).toContain('"loud"');
  });

  it('quotes no line of a config file that does not parse', () => {
    const message = refusal({ configFile: file('broken.yaml', 'saslPassword: s3cret\n  x: : y\n') });
    expect(message).toMatch(/not valid YAML at line \d+, column \d+/);
    expect(message).not.toContain('s3cret');
  });

  it('refuses a --database-url-file rewritten to something that is not a postgres:// URL at the next connection, without quoting it', () => {
    const path = file('rewritten-url', 'postgres://u@db/x');
    const config = resolveConfig({ flags: { databaseUrlFile: path } });
    writeFileSync(path, 'u:s3cret@db/x');
    let caught: unknown;
    try {
      pgConnection(config);
    } catch (error) {
      caught = error;
    }
    expect(OutboxTailError.is(caught) && [caught.code, caught.retriable]).toEqual(['PG_PASSWORD_UNAVAILABLE', true]);
    expect((caught as Error).message).not.toContain('s3cret');
  });

  it('redacts ?password= in the config it logs', () => {
    const config = resolveConfig({ flags: { databaseUrl: 'postgres://u@db/x?password=s3cret' } });
    expect(JSON.stringify(redactConfig(config))).not.toContain('s3cret');
  });

  it('warns about every secret-bearing flag on the command line: --schema-registry-password and --standby-url too', async () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    await main([
      'doctor',
      '--schema-registry-password',
      'reg-pass',
      '--standby-url',
      'postgres://u:sb-pass@127.0.0.1:1/x',
      '--database-url',
      'postgres://u@127.0.0.1:1/x?password=q-pass',
    ]);
    expect(stderr).toMatch(/--schema-registry-password is visible in `ps`; use --schema-registry-password-file/);
    expect(stderr).toMatch(/a password in --standby-url is visible in `ps`; use OUTBOX_TAIL_STANDBY_URL/);
    expect(stderr).toMatch(/a password in --database-url is visible in `ps`/);
    for (const secret of ['reg-pass', 'sb-pass', 'q-pass']) expect(stderr).not.toContain(secret);
  });
});

describe('durations in milliseconds', () => {
  afterEach(() => vi.restoreAllMocks());

  it('converts the deprecated --stall-timeout (seconds) into --stall-timeout-ms, from every source, and warns', () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    expect(resolveConfig({ env: { OUTBOX_TAIL_STALL_TIMEOUT: '2' }, warn }).stallTimeoutMs).toBe(2000);
    expect(resolveConfig({ flags: { stallTimeout: 3 }, warn }).stallTimeoutMs).toBe(3000);
    expect(resolveConfig({ configFile: file('old.yaml', 'stall-timeout: 4\n'), warn }).stallTimeoutMs).toBe(4000);
    expect(warnings).toEqual([
      'env OUTBOX_TAIL_STALL_TIMEOUT is deprecated: use --stall-timeout-ms / OUTBOX_TAIL_STALL_TIMEOUT_MS (it is converted for now)',
      'flag --stall-timeout is deprecated: use --stall-timeout-ms / OUTBOX_TAIL_STALL_TIMEOUT_MS (it is converted for now)',
      `file ${join(dir, 'old.yaml')}: stallTimeout is deprecated: use --stall-timeout-ms / OUTBOX_TAIL_STALL_TIMEOUT_MS (it is converted for now)`,
    ]);
  });

  it('keeps precedence across sources (an old flag beats a new env var) and lets the new name win within one', () => {
    const warn = () => undefined;
    expect(resolveConfig({ flags: { stallTimeout: 3 }, env: { OUTBOX_TAIL_STALL_TIMEOUT_MS: '5000' }, warn }).stallTimeoutMs).toBe(3000);
    expect(resolveConfig({ env: { OUTBOX_TAIL_STALL_TIMEOUT: '3', OUTBOX_TAIL_STALL_TIMEOUT_MS: '5000' }, warn }).stallTimeoutMs).toBe(5000);
    expect(configError(() => resolveConfig({ env: { OUTBOX_TAIL_STALL_TIMEOUT: 'soon' }, warn }))).toMatch(
      /--stall-timeout-ms \/ OUTBOX_TAIL_STALL_TIMEOUT_MS: .*given "soon" by env OUTBOX_TAIL_STALL_TIMEOUT/,
    );
  });

  it('prints each deprecation warning once per process by default', () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
    resolveConfig({ env: { OUTBOX_TAIL_STALL_TIMEOUT: '7' } });
    resolveConfig({ env: { OUTBOX_TAIL_STALL_TIMEOUT: '8' } });
    expect(stderr.match(/warning: env OUTBOX_TAIL_STALL_TIMEOUT is deprecated/g)).toHaveLength(1);
  });
});

describe('the CLI maps numbers as numbers', () => {
  afterEach(() => vi.restoreAllMocks());

  it('--help shows number options as [number] and the old stall timeout as deprecated', async () => {
    let out = '';
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void (out += `${args.join(' ')}\n`));
    vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    await main(['--help']);
    // An option's entry: its line and the wrapped lines after it, up to the next option.
    const line = (flag: string) => {
      const lines = out.split('\n');
      const at = lines.findIndex((l) => l.trimStart().startsWith(`${flag} `));
      const next = lines.findIndex((l, i) => i > at && /^\s*(--|$)/.test(l));
      return at < 0 ? '' : lines.slice(at, next < 0 ? undefined : next).join(' ');
    };
    expect(line('--batch-max-messages')).toMatch(/\[number\]/);
    expect(line('--stall-timeout-ms')).toMatch(/\[number\]/);
    expect(line('--brokers')).toMatch(/\[string\]/);
    expect(line('--stall-timeout')).toMatch(/\[deprecated: use --stall-timeout-ms\]/);
  });

  it('reads recover --margin (deprecated for --recover-margin-ms) instead of ignoring it', async () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
    // A margin that is no duration is refused before any connection: the flag is parsed, not dropped.
    expect(await main(['recover', '--slot', 's', '--margin', 'soon'])).toBe(2);
    expect(stderr).toMatch(/--margin is deprecated: use --recover-margin-ms/);
    expect(stderr).toMatch(/--margin "soon": expected a duration/);
  });

  it('names a flag whose value is not a number', async () => {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true));
    expect(await main(['status', '--slot', 's', '--batch-max-messages', 'lots'])).toBe(2);
    expect(stderr).toMatch(/--batch-max-messages: expected a number/);
  });
});
