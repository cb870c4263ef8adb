/**
 * What the relay's two connections protect, read from the settings alone (libpq's sslmode table is the meaning users
 * expect; docs/operations.md, "TLS"). The daemon logs `risk` at start; doctor adds what the server negotiated.
 */
export interface TransportPosture {
  /** One line: encrypted or not, what is verified. */
  summary: string;
  /** What an attacker on the path can do, when it is more than reading plaintext the operator chose; null otherwise. */
  risk: string | null;
  /** The options that remove the risk; null when there is none. */
  fix: string | null;
  /** True when nothing is encrypted. */
  plaintext: boolean;
}

export interface PostgresTransportSettings {
  databaseUrl?: string | undefined;
  databaseUrlFile?: string | undefined;
  pgSslmode?: 'disable' | 'require' | 'verify-ca' | 'verify-full' | undefined;
  pgSslrootcert?: string | undefined;
  pgSslcert?: string | undefined;
}

export interface KafkaTransportSettings {
  kafkaSsl?: boolean | undefined;
  kafkaSslCa?: string | undefined;
  saslMechanism?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | 'oauthbearer' | 'aws-msk-iam' | undefined;
}

const VERIFY_FULL_FIX = '--pg-sslmode verify-full --pg-sslrootcert <the CA file the server certificate chains to>';

/** The sslmode node-postgres will apply from the URL (or PGSSLMODE without a URL) when --pg-sslmode is not given. */
function urlSslmode(settings: PostgresTransportSettings, env: Readonly<Record<string, string | undefined>>): string | null {
  if (settings.databaseUrlFile !== undefined) return 'from-file';
  if (settings.databaseUrl === undefined) return env.PGSSLMODE ?? null;
  try {
    const params = new URL(settings.databaseUrl).searchParams;
    return params.get('sslmode') ?? (params.get('ssl') === 'true' || params.get('ssl') === '1' ? 'require' : null);
  } catch {
    return null;
  }
}

export function postgresTransport(settings: PostgresTransportSettings, env: Readonly<Record<string, string | undefined>> = process.env): TransportPosture {
  // pg-connection.ts: a root or client certificate without a mode means verify-full.
  const mode = settings.pgSslmode ?? (settings.pgSslrootcert || settings.pgSslcert ? 'verify-full' : undefined);
  const ca = settings.pgSslrootcert ? `CA ${settings.pgSslrootcert}` : "the system's CAs";
  switch (mode) {
    case 'disable':
      return { summary: 'no TLS (--pg-sslmode disable)', risk: null, fix: null, plaintext: true };
    case 'require':
      if (settings.pgSslrootcert) {
        // libpq: require with a root certificate verifies the chain, as verify-ca does.
        return {
          summary: `TLS, chain checked against ${ca}, host name not checked (require with a root certificate)`,
          risk: null,
          fix: null,
          plaintext: false,
        };
      }
      return {
        summary: 'TLS, server not verified (--pg-sslmode require)',
        risk: 'PostgreSQL: --pg-sslmode require encrypts but does not verify the server: anyone on the path can pose as it and read the password and every row',
        fix: VERIFY_FULL_FIX,
        plaintext: false,
      };
    case 'verify-ca':
      return { summary: `TLS, chain checked against ${ca}, host name not checked (verify-ca)`, risk: null, fix: null, plaintext: false };
    case 'verify-full':
      return { summary: `TLS, chain checked against ${ca} and host name checked (verify-full)`, risk: null, fix: null, plaintext: false };
    case undefined:
      break;
  }
  const fromUrl = urlSslmode(settings, env);
  if (fromUrl === 'from-file') {
    return { summary: 'TLS as the sslmode of the URL in --database-url-file says (doctor shows what was negotiated)', risk: null, fix: null, plaintext: false };
  }
  if (fromUrl === null || fromUrl === 'disable') {
    return { summary: 'no TLS (no --pg-sslmode, no sslmode in the URL)', risk: null, fix: VERIFY_FULL_FIX, plaintext: true };
  }
  if (fromUrl === 'no-verify') {
    return {
      summary: 'TLS, server not verified (sslmode=no-verify in the URL)',
      risk: 'PostgreSQL: sslmode=no-verify encrypts but does not verify the server: anyone on the path can pose as it and read the password and every row',
      fix: VERIFY_FULL_FIX,
      plaintext: false,
    };
  }
  // node-postgres reads every other sslmode of a URL (require, prefer, verify-ca) as full verification against the system's CAs.
  return {
    summary: `TLS, chain and host name checked (sslmode=${fromUrl} in the URL, read by node-postgres as verify-full)`,
    risk: null,
    fix: null,
    plaintext: false,
  };
}

const SASL_IN_CLEAR: Record<NonNullable<KafkaTransportSettings['saslMechanism']>, string> = {
  plain: 'SASL PLAIN without TLS sends the password in clear',
  'scram-sha-256': 'SASL SCRAM without TLS keeps the password but leaves every record and the session in clear, open to a man in the middle',
  'scram-sha-512': 'SASL SCRAM without TLS keeps the password but leaves every record and the session in clear, open to a man in the middle',
  oauthbearer: 'SASL OAUTHBEARER without TLS sends the bearer token in clear: anyone who reads it can use it until it expires',
  'aws-msk-iam': 'AWS MSK IAM without TLS sends the signed token in clear (MSK itself accepts IAM only over TLS)',
};

export function kafkaTransport(settings: KafkaTransportSettings): TransportPosture {
  const sasl = settings.saslMechanism ? `, SASL ${settings.saslMechanism}` : ', no SASL';
  if (settings.kafkaSsl) {
    const ca = settings.kafkaSslCa ? `CA ${settings.kafkaSslCa}` : "the system's CAs";
    return { summary: `TLS, chain checked against ${ca} and host name checked${sasl}`, risk: null, fix: null, plaintext: false };
  }
  if (settings.saslMechanism) {
    return {
      summary: `no TLS${sasl}`,
      risk: `Kafka: ${SASL_IN_CLEAR[settings.saslMechanism]}`,
      fix: "--kafka-ssl (with --kafka-ssl-ca <the brokers' CA file> for a private CA) and a SASL_SSL listener",
      plaintext: true,
    };
  }
  return { summary: 'no TLS, no SASL', risk: null, fix: '--kafka-ssl', plaintext: true };
}
