import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { pgConnection } from '../../../src/postgres/pg-connection.js';
import { passwordRotates, pgPasswordFunction, type PgConnectionTarget } from '../../../src/postgres/pg-password-source.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('outbox-tail-pg-password-');
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const base = { connectTimeoutMs: 5_000 };
const target: PgConnectionTarget = { user: 'relay', host: 'db.internal', port: 5432 };
type PasswordFn = (t: PgConnectionTarget) => Promise<string>;

async function failure(promise: Promise<unknown>): Promise<OutboxTailError> {
  try {
    await promise;
  } catch (error) {
    expect(OutboxTailError.is(error)).toBe(true);
    return error as OutboxTailError;
  }
  throw new Error('expected a failure');
}

describe('PostgreSQL passwords that change: read at every connection', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('reads --pg-password-file again at every connection, and the URL password never wins', async () => {
    const pw = file('pw', 'first\n');
    const config = pgConnection({ ...base, databaseUrl: 'postgres://relay:stale@db.internal:6543/app?application_name=x', pgPasswordFile: pw });
    expect(config.connectionString).toBeUndefined();
    expect(config).toMatchObject({ user: 'relay', host: 'db.internal', port: 6543, database: 'app' });
    const password = config.password as unknown as PasswordFn;
    expect(await password(target)).toBe('first');
    writeFileSync(pw, 'second');
    expect(await password(target)).toBe('second');
  });

  it('takes the password of --database-url-file as it is at each connection', async () => {
    const url = file('url', 'postgres://relay:one@db.internal/app');
    const config = pgConnection({ ...base, databaseUrl: 'postgres://relay:one@db.internal/app', databaseUrlFile: url });
    const password = config.password as unknown as PasswordFn;
    expect(await password(target)).toBe('one');
    writeFileSync(url, 'postgres://relay:tw%40o@db.internal/app\n');
    expect(await password(target)).toBe('tw@o');
    writeFileSync(url, '');
    const error = await failure(password(target));
    expect(error.code).toBe('PG_PASSWORD_UNAVAILABLE');
    expect(error.retriable).toBe(true);
  });

  it('runs --pg-password-command at every connection and never puts its output in an error', async () => {
    const counter = file('n', '0');
    const command = `n=$(cat ${counter}); n=$((n+1)); echo $n > ${counter}; echo "token-$n"`;
    const password = pgPasswordFunction({ ...base, pgPasswordCommand: command })!;
    expect(await password(target)).toBe('token-1');
    expect(await password(target)).toBe('token-2');

    const failed = await failure(
      pgPasswordFunction({ ...base, pgPasswordCommand: 'echo sentinel-secret; echo vault: permission denied >&2; exit 3' })!(target),
    );
    expect(failed).toMatchObject({ code: 'PG_PASSWORD_UNAVAILABLE', retriable: true });
    expect(failed.message).toMatch(/exited with 3: vault: permission denied/);
    expect(`${failed.message} ${failed.hint}`).not.toContain('sentinel-secret');

    const empty = await failure(pgPasswordFunction({ ...base, pgPasswordCommand: 'true' })!(target));
    expect(empty.message).toMatch(/printed nothing/);
    const slow = await failure(pgPasswordFunction({ connectTimeoutMs: 200, pgPasswordCommand: 'sleep 5' })!(target));
    expect(slow.message).toMatch(/timed out after 200 ms/);
  });

  it('signs an RDS IAM token for the connection’s host, port and user with the default credential chain', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAOUTBOXTAILTEST');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-a-real-secret');
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    const token = await pgPasswordFunction({ ...base, pgAuth: 'rds-iam', awsRegion: 'eu-west-1' })!({
      user: 'relay',
      host: 'db.abc.eu-west-1.rds.amazonaws.com',
      port: 5432,
    });
    const url = new URL(`https://${token}`);
    expect(url.host).toBe('db.abc.eu-west-1.rds.amazonaws.com:5432');
    expect(url.searchParams.get('Action')).toBe('connect');
    expect(url.searchParams.get('DBUser')).toBe('relay');
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIAOUTBOXTAILTEST\/\d{8}\/eu-west-1\/rds-db\/aws4_request$/);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('says which sources rotate (a failed login is then retried)', () => {
    expect(passwordRotates(base)).toBe(false);
    expect(passwordRotates({ ...base, pgPasswordFile: '/x' })).toBe(true);
    expect(passwordRotates({ ...base, pgPasswordCommand: 'x' })).toBe(true);
    expect(passwordRotates({ ...base, pgAuth: 'rds-iam' })).toBe(true);
    expect(passwordRotates({ ...base, databaseUrlFile: '/x' })).toBe(true);
    expect(pgConnection({ ...base, databaseUrl: 'postgres://u:p@h/db' }).connectionString).toBe('postgres://u:p@h/db');
  });
});

describe('password source options', () => {
  const errorOf = (flags: Record<string, unknown>) => {
    try {
      resolveConfig({ flags: { slot: 's', ...flags } });
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };

  it('refuses two password sources, and rds-iam without TLS', () => {
    expect(errorOf({ pgPasswordFile: file('p1', 'x'), pgPasswordCommand: 'echo x' })).toMatch(/give one password source: pgPasswordFile, pgPasswordCommand/);
    expect(errorOf({ pgAuth: 'rds-iam' })).toMatch(/rds-iam requires TLS: add --pg-sslmode verify-full/);
    expect(errorOf({ pgAuth: 'rds-iam', pgSslmode: 'verify-full' })).toBe('');
    expect(errorOf({ pgPasswordFile: join(dir, 'missing') })).toMatch(/--pg-password-file.*cannot read/s);
  });
});
