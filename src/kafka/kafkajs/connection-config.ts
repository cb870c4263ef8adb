import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { tokenSourceOf, type KafkaSasl } from '../kafka-security.js';
import type { KafkaSinkOptions } from '../kafka-client-options.js';

function kafkajsSasl(sasl: KafkaSasl): SASLOptions {
  if (sasl.mechanism === 'oauthbearer' || sasl.mechanism === 'aws-msk-iam') {
    const source = tokenSourceOf(sasl);
    // Asked at every connection and every re-authentication kafkajs does before the broker's session ends.
    return {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => {
        const { value, extensions } = await source();
        return { value, ...(extensions ? { extensions } : {}) };
      },
    } as SASLOptions;
  }
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
}

/** The kafkajs client settings of a connection: brokers, timeouts, TLS and SASL. */
export function connectionConfig(options: KafkaSinkOptions): Pick<KafkaConfig, 'brokers' | 'connectionTimeout' | 'requestTimeout' | 'ssl' | 'sasl'> {
  return {
    brokers: options.brokers,
    connectionTimeout: options.connectTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    ...(options.ssl !== undefined ? { ssl: options.ssl } : {}),
    ...(options.sasl !== undefined ? { sasl: kafkajsSasl(options.sasl) } : {}),
  };
}
