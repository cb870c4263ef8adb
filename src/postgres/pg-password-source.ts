import { execFile } from 'node:child_process';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { fileErrorReason } from '../shared/read-secret-file.js';
import { readFileSync } from 'node:fs';

/** Where a PostgreSQL password comes from when it can change while the relay runs. */
export interface PgPasswordSettings {
  /** --database-url-file: the URL (and so its password) is read again at every connection. */
  databaseUrlFile?: string | undefined;
  /** --pg-password-file: a file holding only the password (Vault agent, Kubernetes secret volume). */
  pgPasswordFile?: string | undefined;
  /** --pg-password-command: a command printing the password (vault, gcloud sql generate-login-token, aws rds generate-db-auth-token). */
  pgPasswordCommand?: string | undefined;
  /** --pg-auth rds-iam: an RDS/Aurora IAM token signed with the default AWS credential chain. */
  pgAuth?: 'password' | 'rds-iam' | undefined;
  /** --aws-region for rds-iam (default: the AWS SDK's: AWS_REGION, the profile). */
  awsRegion?: string | undefined;
  connectTimeoutMs: number;
}

/** What pg passes to a password function: the parameters of the connection being made. */
export interface PgConnectionTarget {
  user?: string | undefined;
  host?: string | undefined;
  port?: number | string | undefined;
}

/** Called by pg at every connection (pg's `password` may be a function): the password for that connection. */
export type PgPasswordFunction = (target: PgConnectionTarget) => Promise<string>;

/** At most this much of a password command's output is read; a password is far shorter. */
const COMMAND_MAX_BYTES = 64 * 1024;

const unavailable = (message: string, hint: string, cause?: unknown) =>
  new OutboxTailError('PG_PASSWORD_UNAVAILABLE', message, { retriable: true, hint, ...(cause !== undefined ? { cause } : {}) });

/** Whether the password is read at every connection (a failed login may heal once the source has the new one). */
export function passwordRotates(settings: PgPasswordSettings): boolean {
  return Boolean(settings.databaseUrlFile || settings.pgPasswordFile || settings.pgPasswordCommand || settings.pgAuth === 'rds-iam');
}

/**
 * The password function for the configured source, or undefined when the
 * password is the URL's own (read once). Each call reads the source afresh, so
 * a rotated file, a new Vault lease or a new IAM token is used by the next
 * connection; nothing it returns is ever logged.
 */
export function pgPasswordFunction(settings: PgPasswordSettings): PgPasswordFunction | undefined {
  if (settings.pgPasswordCommand) {
    const command = settings.pgPasswordCommand;
    return () => runPasswordCommand(command, settings.connectTimeoutMs);
  }
  if (settings.pgPasswordFile) {
    const file = settings.pgPasswordFile;
    return async () => readPassword(file, '--pg-password-file');
  }
  if (settings.pgAuth === 'rds-iam') return rdsIamToken(settings.awsRegion);
  if (settings.databaseUrlFile) {
    const file = settings.databaseUrlFile;
    return async () => passwordOfUrl(readPassword(file, '--database-url-file'));
  }
  return undefined;
}

function readPassword(file: string, option: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw unavailable(`${option} ${file} cannot be read: ${fileErrorReason(error)}`, `check that ${file} exists and the relay's user may read it`, error);
  }
  if (text === '') throw unavailable(`${option} ${file} is empty`, `a secret manager may be rewriting it; it must hold the password (or URL)`);
  return text;
}

function passwordOfUrl(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    throw unavailable('--database-url-file no longer holds a URL', 'the file must hold one postgres:// URL');
  }
}

function runPasswordCommand(command: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', command], { timeout: timeoutMs, maxBuffer: COMMAND_MAX_BYTES, encoding: 'utf8', windowsHide: true }, (error, stdout, stderr) => {
      // Never the command's output in a message: it is the password.
      const why = stderr.trim().split('\n')[0]?.slice(0, 200) ?? '';
      if (error) {
        const how = error.killed ? `timed out after ${timeoutMs} ms` : `exited with ${error.code ?? error.signal ?? 'an error'}`;
        reject(
          unavailable(
            `--pg-password-command ${how}${why ? `: ${why}` : ''}`,
            "run the command by hand as the relay's user: it must print the password on standard output and exit 0 within --connect-timeout-ms",
            error,
          ),
        );
        return;
      }
      const password = stdout.trim();
      if (password === '') reject(unavailable('--pg-password-command printed nothing', 'the command must print the password on standard output'));
      else resolve(password);
    });
  });
}

interface RdsSigner {
  getAuthToken(): Promise<string>;
}

/**
 * RDS/Aurora IAM authentication: a token signed for the connection's host,
 * port and user (valid 15 minutes, so one per connection is always fresh).
 * @aws-sdk/rds-signer is loaded only when --pg-auth rds-iam is chosen.
 */
function rdsIamToken(region: string | undefined): PgPasswordFunction {
  const signers = new Map<string, RdsSigner>();
  return async (target) => {
    const host = target.host ?? 'localhost';
    const port = Number(target.port ?? 5432);
    const username = target.user ?? '';
    const key = `${username}@${host}:${port}`;
    let signer = signers.get(key);
    if (!signer) {
      const { Signer } = await import('@aws-sdk/rds-signer').catch((error: unknown) => {
        throw new OutboxTailError('CONFIG_INVALID', `--pg-auth rds-iam needs the package @aws-sdk/rds-signer: ${(error as Error).message}`, {
          hint: 'install it next to outbox-tail (npm install @aws-sdk/rds-signer)',
          cause: error,
        });
      });
      signer = new Signer({ hostname: host, port, username, ...(region ? { region } : {}) }) as RdsSigner;
      signers.set(key, signer);
    }
    try {
      return await signer.getAuthToken();
    } catch (error) {
      throw unavailable(
        `--pg-auth rds-iam: no IAM token for ${key}: ${(error as Error).message}`,
        'the relay needs AWS credentials (the default chain: env, profile, web identity, instance role) allowed rds-db:connect on this user, and a region (--aws-region or AWS_REGION)',
        error,
      );
    }
  };
}
