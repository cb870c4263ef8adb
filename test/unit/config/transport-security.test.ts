import { describe, expect, it } from 'vitest';
import { kafkaTransport, postgresTransport } from '../../../src/config/transport-security.js';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { pgConnection } from '../../../src/postgres/pg-connection.js';

const url = 'postgres://relay@db.internal:5432/app';

describe('transport security (libpq sslmode meaning)', () => {
  it('says require without a root certificate leaves the server unverified, and how to fix it', () => {
    const posture = postgresTransport({ databaseUrl: url, pgSslmode: 'require' });
    expect(posture.risk).toMatch(/does not verify the server/);
    expect(posture.fix).toContain('--pg-sslmode verify-full --pg-sslrootcert');
  });

  it('reads require with a root certificate as a chain check, as libpq does, with no risk', () => {
    expect(postgresTransport({ databaseUrl: url, pgSslmode: 'require', pgSslrootcert: '/ca.pem' })).toMatchObject({
      risk: null,
      summary: expect.stringContaining('chain checked against CA /ca.pem, host name not checked'),
    });
  });

  it("treats the URL's sslmode as node-postgres does: no-verify is unverified, every other mode verifies fully", () => {
    expect(postgresTransport({ databaseUrl: `${url}?sslmode=no-verify` }).risk).toMatch(/no-verify/);
    expect(postgresTransport({ databaseUrl: `${url}?sslmode=require` })).toMatchObject({
      risk: null,
      summary: expect.stringContaining('read by node-postgres as verify-full'),
    });
    expect(postgresTransport({ databaseUrl: url }, {})).toMatchObject({ risk: null, plaintext: true });
    expect(postgresTransport({}, { PGSSLMODE: 'no-verify' }).risk).toMatch(/no-verify/);
  });

  it('warns for every SASL mechanism without TLS, naming what crosses in clear', () => {
    expect(kafkaTransport({ saslMechanism: 'plain' }).risk).toBe('Kafka: SASL PLAIN without TLS sends the password in clear');
    for (const mechanism of ['scram-sha-256', 'scram-sha-512', 'oauthbearer', 'aws-msk-iam'] as const) {
      expect(kafkaTransport({ saslMechanism: mechanism }).risk).toMatch(/without TLS/);
      expect(kafkaTransport({ saslMechanism: mechanism, kafkaSsl: true }).risk).toBeNull();
    }
    expect(kafkaTransport({}).risk).toBeNull();
  });
});

describe('--pg-sslmode verify-ca', () => {
  it('is a config error without --pg-sslrootcert, naming the fix (libpq refuses it too)', () => {
    expect(() => resolveConfig({ flags: { slot: 's', databaseUrl: url, pgSslmode: 'verify-ca' } })).toThrow(
      /--pg-sslmode.*verify-ca needs --pg-sslrootcert <the CA file the server certificate chains to>.*use verify-full/s,
    );
    expect(() => resolveConfig({ flags: { slot: 's', databaseUrl: url, pgSslmode: 'verify-ca', pgSslrootcert: '/ca.pem' } })).not.toThrow();
  });

  it('is refused by the connection settings too (callers that bypass the schema)', () => {
    expect(() => pgConnection({ databaseUrl: url, connectTimeoutMs: 1000, pgSslmode: 'verify-ca' })).toThrow(/verify-ca without a root certificate/);
  });
});
