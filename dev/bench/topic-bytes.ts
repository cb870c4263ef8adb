/**
 * Bytes a topic holds on the broker: the sum of its partitions' log sizes, as
 * Kafka's own LogDirsCommand (kafka-log-dirs.sh --describe) reports them, run
 * from the broker's jars. The bench divides it by the records for the bytes
 * per event of each --compression; the compression test checks it shrinks.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { stackEnv } from '../stack/env.js';
import { findKafkaJars } from '../stack/native-kafka.js';

const run = promisify(execFile);

/** Runs a class of the broker's jars (Kafka's own tools) and returns its standard output. */
export async function kafkaTool(mainClass: string, args: string[]): Promise<string> {
  const env = stackEnv();
  const { libDir } = await findKafkaJars(env.cacheDir, env.kafkaVersion);
  const java = env.javaHome !== undefined ? `${env.javaHome}/bin/java` : 'java';
  const { stdout } = await run(java, ['-Xmx256M', '-cp', `${libDir}/*`, mainClass, ...args], { maxBuffer: 1 << 24, timeout: 90_000 });
  return stdout;
}

export async function topicBytes(brokers: string[], topics: string[]): Promise<Map<string, number>> {
  const out = await kafkaTool('org.apache.kafka.tools.LogDirsCommand', [
    '--bootstrap-server',
    brokers.join(','),
    '--describe',
    '--topic-list',
    topics.join(','),
  ]);
  const line = out.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`kafka-log-dirs printed no JSON: ${out.slice(0, 500)}`);
  const json = JSON.parse(line) as { brokers: Array<{ logDirs: Array<{ partitions: Array<{ partition: string; size: number }> }> }> };
  const sizes = new Map<string, number>(topics.map((t) => [t, 0]));
  for (const dir of json.brokers.flatMap((b) => b.logDirs))
    for (const p of dir.partitions) {
      const topic = p.partition.slice(0, p.partition.lastIndexOf('-'));
      if (sizes.has(topic)) sizes.set(topic, sizes.get(topic)! + p.size);
    }
  return sizes;
}
