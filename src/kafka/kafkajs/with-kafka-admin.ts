import { logLevel, type Admin, type Kafka } from 'kafkajs';
import { createLogger } from '../../shared/create-logger.js';
import { kafkaSinkOptions, type KafkaConnectionSettings } from '../kafka-client-options.js';
import { connectionConfig } from './connection-config.js';
import { createKafka } from './create-kafka.js';
import { classifyKafkaError } from './kafka-errors.js';

/**
 * A kafkajs client for a command (init, verify, doctor): the relay's
 * connection settings (brokers, TLS, SASL, timeouts), `<client-id>-<name>` so
 * the brokers' logs say who asked, no client logs, and its own retries.
 */
export function commandKafka(settings: KafkaConnectionSettings, purpose: { name: string; retries: number }): Kafka {
  return createKafka({
    ...connectionConfig(kafkaSinkOptions(settings, createLogger('silent'))),
    clientId: `${settings.clientId}-${purpose.name}`,
    logLevel: logLevel.NOTHING,
    retry: { retries: purpose.retries },
  });
}

/**
 * Runs `work` on an admin client of `kafka` and always disconnects it; the
 * one admin opener of every command that needs one. Errors are classified
 * (KAFKA_UNREACHABLE, KAFKA_AUTH, ...) with `describe` saying what failed;
 * with null they reach the caller as kafkajs threw them (doctor turns them
 * into a failed check).
 */
export async function withKafkaAdmin<T>(kafka: Kafka, describe: string | null, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    return await work(admin);
  } catch (error) {
    throw describe === null ? error : classifyKafkaError(error, describe);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
