/**
 * The compiled relay (dist/, built by `npm run bench`), for the bench's own
 * processes: the null-sink relay, the Kafka limit and the polling baseline run
 * exactly the code bin/outbox-tail.js runs (tsx would add its own helpers,
 * e.g. esbuild's __name wrappers, to the hot paths). Types come from src/.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { ROOT } from './bench-process.js';

async function load<T>(path: string): Promise<T> {
  const file = `${ROOT}dist/src/${path}`;
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm run bench does)`);
  return (await import(pathToFileURL(file).href)) as T;
}

export const runDaemonModule = () => load<typeof import('../../src/commands/run/run-daemon.js')>('commands/run/run-daemon.js');
export const resolveConfigModule = () => load<typeof import('../../src/config/resolve-config.js')>('config/resolve-config.js');
export const kafkaSinkModule = () => load<typeof import('../../src/sink/kafkajs/kafka-sink.js')>('sink/kafkajs/kafka-sink.js');
export const platformaticSinkModule = () => load<typeof import('../../src/sink/platformatic/platformatic-sink.js')>('sink/platformatic/platformatic-sink.js');

/**
 * The relay's sink for `client` (kafkajs or platformatic), compiled, with the
 * settings every bench helper publishes with: they differ only in client id.
 */
export async function benchSink(client: string, brokers: string[], clientId: string): Promise<import('../../src/sink/sink.js').Sink> {
  const options: import('../../src/kafka/kafka-client-options.js').KafkaSinkOptions = {
    brokers,
    clientId,
    retries: 5,
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    allowAutoTopicCreation: false,
    logger: pino({ level: 'warn' }),
  };
  if (client === 'platformatic') return new (await platformaticSinkModule()).PlatformaticKafkaSink(options);
  if (client === 'kafkajs') return new (await kafkaSinkModule()).KafkaSink(options);
  throw new Error(`unknown Kafka client ${client}`);
}
export const recordBuilderModule = () =>
  load<typeof import('../../src/pipeline/publish/record-format/record-builder.js')>('pipeline/publish/record-format/record-builder.js');
