import type { ConnectionOptions } from 'node:tls';
import { readPem } from '../shared/read-pem.js';
import { mskIamTokenSource, oidcTokenSource, type OidcClientCredentials, type SaslTokenSource } from './sasl-token-source.js';

/**
 * SASL credentials in the relay's own terms, plain data (they cross to the
 * sink thread); each sink maps them to its client library, and the token
 * mechanisms get their token source there (tokenSourceOf).
 */
export type KafkaSasl =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; oidc: OidcClientCredentials; timeoutMs: number }
  | { mechanism: 'aws-msk-iam'; region?: string | undefined };

export type SaslMechanism = KafkaSasl['mechanism'];

export interface KafkaSecurity {
  /** TLS to the brokers, host names verified (CA, client certificate and key read from PEM files). */
  ssl?: ConnectionOptions;
  sasl?: KafkaSasl;
}

/** --kafka-ssl*, --sasl-*: file paths, read at every connect (and on the sink thread by the thread itself). */
export interface KafkaSecuritySettings {
  kafkaSsl?: boolean | undefined;
  kafkaSslCa?: string | undefined;
  kafkaSslCert?: string | undefined;
  kafkaSslKey?: string | undefined;
  saslMechanism?: SaslMechanism | undefined;
  saslUsername?: string | undefined;
  saslPassword?: string | undefined;
  saslOauthTokenEndpoint?: string | undefined;
  saslOauthClientId?: string | undefined;
  saslOauthClientSecret?: string | undefined;
  saslOauthScope?: string | undefined;
  saslOauthExtensions?: string[] | undefined;
  awsRegion?: string | undefined;
  connectTimeoutMs?: number | undefined;
}

/**
 * TLS and SASL settings for every Kafka connection the relay opens, from the
 * config: whichever client a sink uses, all of them connect the same way.
 */
export function kafkaSecurity(config: KafkaSecuritySettings): KafkaSecurity {
  const out: KafkaSecurity = {};
  if (config.kafkaSsl || config.kafkaSslCa || config.kafkaSslCert) {
    const tls: ConnectionOptions = { rejectUnauthorized: true };
    if (config.kafkaSslCa) tls.ca = readPem(config.kafkaSslCa, 'kafka-ssl-ca');
    if (config.kafkaSslCert) tls.cert = readPem(config.kafkaSslCert, 'kafka-ssl-cert');
    if (config.kafkaSslKey) tls.key = readPem(config.kafkaSslKey, 'kafka-ssl-key');
    out.ssl = tls;
  }
  if (config.saslMechanism === 'oauthbearer') {
    const extensions = config.saslOauthExtensions?.length
      ? Object.fromEntries(config.saslOauthExtensions.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
      : undefined;
    out.sasl = {
      mechanism: 'oauthbearer',
      oidc: {
        tokenEndpoint: config.saslOauthTokenEndpoint ?? '',
        clientId: config.saslOauthClientId ?? '',
        clientSecret: config.saslOauthClientSecret ?? '',
        ...(config.saslOauthScope ? { scope: config.saslOauthScope } : {}),
        ...(extensions ? { extensions } : {}),
      },
      timeoutMs: config.connectTimeoutMs ?? 10_000,
    };
  } else if (config.saslMechanism === 'aws-msk-iam') {
    out.sasl = { mechanism: 'aws-msk-iam', region: config.awsRegion };
  } else if (config.saslMechanism) {
    out.sasl = { mechanism: config.saslMechanism, username: config.saslUsername ?? '', password: config.saslPassword ?? '' };
  }
  return out;
}

const tokenSources = new Map<string, SaslTokenSource>();

/**
 * The token source of a token mechanism, one per process (and thread) and
 * settings: every client of the relay (producers, admin, consumers) presents
 * the same cached token and refreshes it once.
 */
export function tokenSourceOf(sasl: Extract<KafkaSasl, { mechanism: 'oauthbearer' | 'aws-msk-iam' }>): SaslTokenSource {
  const key = JSON.stringify(sasl);
  let source = tokenSources.get(key);
  if (!source) {
    source = sasl.mechanism === 'oauthbearer' ? oidcTokenSource(sasl.oidc, sasl.timeoutMs) : mskIamTokenSource(sasl.region);
    tokenSources.set(key, source);
  }
  return source;
}
