import type { ConnectionOptions } from 'node:tls';
import { readPem } from '../shared/read-pem.js';

/** SASL credentials in the relay's own terms; each sink maps them to its client library. */
export interface KafkaSasl {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

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
  saslMechanism?: KafkaSasl['mechanism'] | undefined;
  saslUsername?: string | undefined;
  saslPassword?: string | undefined;
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
  if (config.saslMechanism) {
    out.sasl = { mechanism: config.saslMechanism, username: config.saslUsername ?? '', password: config.saslPassword ?? '' };
  }
  return out;
}
