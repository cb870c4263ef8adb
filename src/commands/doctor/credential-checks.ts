import { kafkaSecurity, tokenSourceOf, type KafkaSecuritySettings } from '../../kafka/kafka-security.js';
import { pgPasswordFunction, type PgPasswordSettings } from '../../postgres/pg-password-source.js';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { CheckResult } from './doctor-checks.js';

const describe = (error: unknown) => (OutboxTailError.is(error) ? error.describe() : (error as Error).message);

/** The connection's user, host and port from the URL, as pg would pass them to a password function. */
function target(databaseUrl: string | undefined): { user?: string; host?: string; port?: number } {
  if (!databaseUrl) return {};
  try {
    const u = new URL(databaseUrl);
    return { user: decodeURIComponent(u.username), host: u.hostname, port: Number(u.port || 5432) };
  } catch {
    return {};
  }
}

/**
 * The credential sources read at every connection, tried once as the relay
 * would: the PostgreSQL password source (file, command, RDS IAM) and the Kafka
 * OAUTHBEARER or MSK IAM token. Nothing they return is shown.
 */
export async function credentialChecks(config: PgPasswordSettings & KafkaSecuritySettings & { databaseUrl?: string | undefined }): Promise<CheckResult[]> {
  const checks: CheckResult[] = [];
  const password = config.databaseUrlFile ? undefined : pgPasswordFunction(config);
  if (password) {
    const source = config.pgPasswordCommand
      ? '--pg-password-command'
      : config.pgPasswordFile
        ? `--pg-password-file ${config.pgPasswordFile}`
        : '--pg-auth rds-iam';
    const check = 'postgres password source';
    try {
      await password(target(config.databaseUrl));
      checks.push({ check, status: 'ok', found: `${source}: gave a password (read again at every connection)`, fix: null });
    } catch (error) {
      checks.push({
        check,
        status: 'fail',
        found: `${source}: ${describe(error)}`,
        fix: OutboxTailError.is(error) && error.hint ? error.hint : 'check the source',
      });
    }
  }
  const sasl = kafkaSecurity(config).sasl;
  if (sasl && (sasl.mechanism === 'oauthbearer' || sasl.mechanism === 'aws-msk-iam')) {
    const check = sasl.mechanism === 'oauthbearer' ? 'kafka oauth token endpoint' : 'kafka msk iam token';
    try {
      const token = await tokenSourceOf(sasl)();
      const left = Math.round((token.expiresAt - Date.now()) / 1000);
      const from =
        sasl.mechanism === 'oauthbearer'
          ? `from ${new URL(sasl.oidc.tokenEndpoint).origin} for client ${sasl.oidc.clientId}`
          : `for ${sasl.region ?? 'the default region'}`;
      checks.push({ check, status: 'ok', found: `a token ${from}, valid for ${left} s`, fix: null });
    } catch (error) {
      checks.push({ check, status: 'fail', found: describe(error), fix: OutboxTailError.is(error) && error.hint ? error.hint : 'check the SASL options' });
    }
  }
  return checks;
}
