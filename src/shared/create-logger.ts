import { pino, type Logger } from 'pino';
import { redactText } from './redact-secrets.js';

/**
 * JSON logs on stdout with a stable shape (level, time, component, slot, lsn,
 * outboxId, code). Redaction is a second line of defence: the code never logs
 * payloads, and URLs are redacted before logging. Every line, once serialised,
 * also goes through redactText: a credential that reached a message or an
 * error (a driver quoting its connection string) is masked by its form.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'outbox-tail', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redactText },
      redact: {
        paths: [
          'password',
          '*.password',
          'payload',
          '*.payload',
          'saslPassword',
          '*.saslPassword',
          'sasl.password',
          '*.sasl.password',
          'saslOauthClientSecret',
          '*.saslOauthClientSecret',
          'oidc.clientSecret',
          '*.oidc.clientSecret',
          '*.*.oidc.clientSecret',
          'connectionString',
          '*.connectionString',
        ],
        censor: '***',
      },
    },
    destination ?? pino.destination({ fd: 1, sync: true }),
  );
}
