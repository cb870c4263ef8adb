import type { Logger } from 'pino';
import type { DoctorSettings } from './doctor-settings.js';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import { describeTarget } from '../../postgres/describe-target.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { redactUrl } from '../../shared/redact-secrets.js';
import { checkKafkaTls, checkStandbyDecoding, doctorExitCode, kafkaChecks, postgresChecks, type CheckResult, type CheckStatus } from './doctor-checks.js';
import type { DoctorOptions, KafkaFacts, PostgresFacts, StandbyFacts } from './doctor-facts.js';
import { credentialChecks } from './credential-checks.js';
import { expectedTopics, gatherKafkaFacts } from './gather-kafka-facts.js';
import { gatherPostgresFacts, gatherStandbyFacts } from './gather-postgres-facts.js';

/** `outbox-tail doctor --json` prints this object (docs/doctor.md). */
export interface DoctorReport {
  /** The worst status of all checks. */
  status: CheckStatus;
  /** The process exit code: 0 all ok, 1 a warn (and no fail), 2 a fail. */
  exitCode: number;
  postgres: { target: string; serverVersion: string | null; database: string | null; user: string | null };
  kafka: { brokers: string[]; brokerCount: number | null };
  checks: CheckResult[];
}

function reason(error: unknown): string {
  return OutboxTailError.is(error) ? error.describe() : error instanceof Error ? error.message : String(error);
}

/** The primary's wal_level through --primary-url; null when none is given or it cannot be read (the check says so). */
async function primaryWalLevel(config: DoctorSettings): Promise<string | null> {
  if (config.primaryUrl === undefined) return null;
  return withPgClient(
    { ...config, databaseUrl: config.primaryUrl, databaseUrlFile: undefined },
    async (client) => (await client.query<{ w: string }>("select current_setting('wal_level') as w")).rows[0]!.w,
  ).catch(() => null);
}

/** Gathers the facts (PostgreSQL, the standby, Kafka; each failure is a failed check, never a crash) and runs every check. */
export async function runDoctor(config: DoctorSettings, options: DoctorOptions, logger: Logger, nowMs = Date.now()): Promise<DoctorReport> {
  // The credential sources first: a password command or token endpoint that fails explains the connection failures below.
  const checks: CheckResult[] = await credentialChecks(config);
  let pg: PostgresFacts | null = null;
  try {
    pg = await withPgClient(config, (client) => gatherPostgresFacts(client, config, options.walSampleMs));
  } catch (error) {
    checks.push({
      check: 'postgres connection',
      status: 'fail',
      found: reason(error),
      fix: 'check --database-url (or --database-url-file) and that PostgreSQL is up',
    });
  }
  if (pg) {
    let standby: StandbyFacts | null = null;
    let standbyError: string | null = null;
    if (options.standbyUrl !== null) {
      try {
        standby = await gatherStandbyFacts(options.standbyUrl, config);
      } catch (error) {
        standbyError = `${redactUrl(options.standbyUrl)}: ${reason(error)}`;
      }
    }
    if (pg.inRecovery) checks.push(checkStandbyDecoding(pg, config, await primaryWalLevel(config)));
    checks.push(...postgresChecks(pg, config, options, { facts: standby, error: standbyError }, nowMs));
  }
  // From the options alone: it explains a failed connection below as well as a working one.
  checks.push(checkKafkaTls(config));
  let kafka: KafkaFacts | null = null;
  try {
    kafka = await gatherKafkaFacts(config, expectedTopics(config, pg?.templateValues ?? []));
  } catch (error) {
    checks.push({ check: 'kafka connection', status: 'fail', found: reason(error), fix: 'check --brokers and the Kafka TLS/SASL options' });
  }
  if (kafka) checks.push(...kafkaChecks(kafka, config, options));
  const exitCode = doctorExitCode(checks);
  return {
    status: checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'ok',
    exitCode,
    postgres: { target: describeTarget(config), serverVersion: pg?.serverVersion ?? null, database: pg?.database ?? null, user: pg?.user ?? null },
    kafka: { brokers: config.brokers, brokerCount: kafka?.brokers ?? null },
    checks,
  };
}

/** The human table: check, status, what was found, and under it the fix. */
export function formatDoctorReport(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((c) => c.check.length), 'CHECK'.length) + 2;
  const lines = [
    `postgres ${report.postgres.target} (PostgreSQL ${report.postgres.serverVersion ?? '?'}, database ${report.postgres.database ?? '?'}, user ${report.postgres.user ?? '?'}); kafka ${report.kafka.brokers.join(',')} (${report.kafka.brokerCount ?? '?'} broker(s))`,
    '',
    `${'CHECK'.padEnd(width)}${'STATUS'.padEnd(8)}FOUND`,
  ];
  for (const c of report.checks) {
    lines.push(`${c.check.padEnd(width)}${c.status.padEnd(8)}${c.found}`);
    if (c.fix) lines.push(`${' '.repeat(width + 8)}fix: ${c.fix}`);
  }
  const count = (s: CheckStatus) => report.checks.filter((c) => c.status === s).length;
  lines.push('', `${report.status}: ${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail (exit ${report.exitCode})`);
  return `${lines.join('\n')}\n`;
}
