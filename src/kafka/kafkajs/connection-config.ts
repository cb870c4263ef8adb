import type { KafkaConfig, SASLOptions } from 'kafkajs';
import type { KafkaSasl } from '../kafka-security.js';
import type { KafkaSinkOptions } from '../kafka-client-options.js';

function kafkajsSasl({ mechanism, username, password }: KafkaSasl): SASLOptions {
  return { mechanism, username, password };
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
