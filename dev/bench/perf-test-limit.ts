/**
 * The Kafka-side limit: Kafka's own `kafka-producer-perf-test`
 * (org.apache.kafka.tools.ProducerPerformance from the kafka-tools jar, which
 * `npm run setup` caches with the broker's jars), the Java producer publishing
 * as many records as the catch-up backlog holds, as fast as it can, to a topic
 * with the same partitions.
 *
 * What it can match of an outbox record: idempotent, acks=all, the same bytes
 * per record. What it cannot: the tool sends no key and no headers (it has no
 * option for either, Kafka 4.1.1), so its value is as long as the outbox
 * record's key, value and six headers together, length prefixes included (the
 * same record size in the log), and with no key the Java producer's sticky
 * partitioner fills one partition's batch at a time instead of hashing keys.
 * batch.size is the relay's byte limit per produce request (batchMaxBytes,
 * 300 kB by default): with the sticky partitioner a request carries about one
 * such batch, as large as the relay's. With the Java default (16 kB) the tool
 * ran at half the relay's own sink on this machine: a limit of request
 * overhead, not of Kafka. The rest stays the Java producer's default
 * (linger.ms 5, up to five requests in flight per connection).
 */
import pg from 'pg';
import { findKafkaJars } from '../stack/native-kafka.js';
import { stackEnv } from '../stack/env.js';
import { processCpuSeconds } from '../support/proc-stats.js';
import { spawnProcess } from './bench-process.js';
import { recordBuilderModule } from './dist.js';
import { OUTBOX_ROW_COLUMNS, rowEvent, type OutboxRowText } from './outbox-row-event.js';

export const PERF_TEST_CLASS = 'org.apache.kafka.tools.ProducerPerformance';

/** The producer settings given to the tool (everything else is the Java producer's default). */
export const PERF_TEST_PRODUCER_PROPS: Readonly<Record<string, string>> = {
  acks: 'all',
  'enable.idempotence': 'true',
  'client.id': 'outbox-tail-bench-perf-test',
};

export interface OutboxRecordSize {
  /** Mean bytes of the key, the value, and the header names and values, over the sample. */
  key_bytes: number;
  value_bytes: number;
  header_bytes: number;
  header_count: number;
  /** What the tool's value must hold for the same record size: all of the above plus the length prefixes of key and headers. */
  perf_test_record_size: number;
  sampled: number;
}

export interface PerfTestLimit {
  events_per_sec: number;
  seconds: number;
  mb_per_sec: number;
  /** The tool's own send-to-ack latencies. */
  avg_latency_ms: number;
  p50_latency_ms: number;
  p99_latency_ms: number;
  p999_latency_ms: number;
  /** CPU of the JVM per record, its start-up included (a few seconds of JIT and class loading: an upper bound). */
  client_us_per_event: number | null;
  broker_us_per_event: number | null;
  record: OutboxRecordSize;
  producer_props: Record<string, string>;
  /** What of an outbox record the tool cannot reproduce. */
  differences: string;
  kafka_version: string;
}

/** Bytes of a zigzag varint, as Kafka's record v2 writes lengths. */
function varintBytes(v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (u >= 0x80) {
    n++;
    u >>>= 7;
  }
  return n;
}

/** The mean size of the records the relay builds from the first `sample` rows of the backlog (its own RecordBuilder). */
export async function outboxRecordSize(databaseUrl: string, table: string, aggregateType: string, topic: string, sample = 2000): Promise<OutboxRecordSize> {
  const { RecordBuilder } = await recordBuilderModule();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<OutboxRowText>(`select ${OUTBOX_ROW_COLUMNS} from ${table} where aggregate_type = $1 order by ctid limit $2`, [
      aggregateType,
      sample,
    ]);
    if (rows.length === 0) throw new Error(`no outbox rows of ${aggregateType} in ${table} to size the perf-test records from`);
    const builder = new RecordBuilder(topic);
    let key = 0;
    let value = 0;
    let headers = 0;
    let headerCount = 0;
    // Key and header lengths are the prefixes the tool's record lacks; the value's prefix it has (a longer value: maybe a byte more).
    let prefixes = 0;
    for (const row of rows) {
      const r = builder.build(rowEvent(row, table));
      const k = Buffer.byteLength(r.key);
      key += k;
      value += r.value.length;
      prefixes += varintBytes(k);
      const entries = Object.entries(r.headers);
      headerCount += entries.length;
      for (const [name, v] of entries) {
        const nb = Buffer.byteLength(name);
        const vb = Buffer.byteLength(v);
        headers += nb + vb;
        prefixes += varintBytes(nb) + varintBytes(vb);
      }
    }
    const n = rows.length;
    return {
      key_bytes: Math.round(key / n),
      value_bytes: Math.round(value / n),
      header_bytes: Math.round(headers / n),
      header_count: Math.round(headerCount / n),
      perf_test_record_size: Math.round((key + value + headers + prefixes) / n),
      sampled: n,
    };
  } finally {
    await client.end();
  }
}

/** The tool's closing line: "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P50 ms 50th, P95 ms 95th, P99 ms 99th, P999 ms 99.9th." */
const SUMMARY =
  /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/;

export function parsePerfTestSummary(
  line: string,
): { records: number; events_per_sec: number; mb_per_sec: number; avg_ms: number; p50_ms: number; p99_ms: number; p999_ms: number } | null {
  const m = SUMMARY.exec(line);
  if (!m) return null;
  return {
    records: Number(m[1]),
    events_per_sec: Number(m[2]),
    mb_per_sec: Number(m[3]),
    avg_ms: Number(m[4]),
    p50_ms: Number(m[6]),
    p99_ms: Number(m[8]),
    p999_ms: Number(m[9]),
  };
}

/** Runs kafka-producer-perf-test once: `events` records of `record.perf_test_record_size` bytes to `topic`, unthrottled. */
export async function producerPerfTest(options: {
  brokers: string[];
  topic: string;
  events: number;
  record: OutboxRecordSize;
  brokerPid: number | undefined;
  /** The producer's batch.size: the relay's batchMaxBytes. */
  batchBytes: number;
  timeoutMs: number;
  javaBin?: string;
}): Promise<PerfTestLimit> {
  const env = stackEnv();
  const { libDir, version } = await findKafkaJars(env.cacheDir, env.kafkaVersion);
  const producerProps = { ...PERF_TEST_PRODUCER_PROPS, 'batch.size': String(options.batchBytes) };
  const props = { 'bootstrap.servers': options.brokers.join(','), ...producerProps };
  const java = options.javaBin ?? (env.javaHome !== undefined ? `${env.javaHome}/bin/java` : 'java');
  const proc = spawnProcess({
    name: 'kafka-producer-perf-test',
    command: java,
    // The heap kafka-producer-perf-test.sh gives it; the tools jar logs through log4j2, quiet without a config.
    args: [
      '-Xmx512M',
      '-cp',
      `${libDir}/*`,
      PERF_TEST_CLASS,
      '--topic',
      options.topic,
      '--num-records',
      String(options.events),
      '--record-size',
      String(options.record.perf_test_record_size),
      '--throughput',
      '-1',
      '--producer-props',
      ...Object.entries(props).map(([k, v]) => `${k}=${v}`),
    ],
    env: { ...(env.javaHome !== undefined ? { JAVA_HOME: env.javaHome } : {}) },
  });
  const broker0 = processCpuSeconds(options.brokerPid);
  try {
    const line = await proc.waitForLog((l) => typeof l.msg === 'string' && SUMMARY.test(l.msg), options.timeoutMs);
    const broker1 = processCpuSeconds(options.brokerPid);
    const exit = await proc.exited;
    if (exit.code !== 0) throw new Error(`kafka-producer-perf-test exited ${exit.code ?? exit.signal}: ${proc.stderr().slice(-2000)}`);
    const s = parsePerfTestSummary(line.msg!)!;
    const cpu = proc.cpuSeconds();
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      events_per_sec: Math.round(s.events_per_sec),
      seconds: Math.round((s.records / s.events_per_sec) * 100) / 100,
      mb_per_sec: s.mb_per_sec,
      avg_latency_ms: s.avg_ms,
      p50_latency_ms: s.p50_ms,
      p99_latency_ms: s.p99_ms,
      p999_latency_ms: s.p999_ms,
      client_us_per_event: cpu > 0 ? round((cpu * 1e6) / s.records) : null,
      broker_us_per_event: broker0 === null || broker1 === null ? null : round(((broker1 - broker0) * 1e6) / s.records),
      record: options.record,
      producer_props: producerProps,
      differences:
        'no key and no headers (the tool has no option for either): its value carries their bytes, so each record is as long; ' +
        'null keys: the sticky partitioner fills one partition at a time; the Java producer batches by its own rule (batch.size per partition, linger.ms 5)',
      kafka_version: version,
    };
  } catch (error) {
    throw new Error(
      `kafka-producer-perf-test: ${(error as Error).message}; its output: ${proc.logs
        .map((l) => l.msg)
        .join('\n')
        .slice(-2000)}`,
      {
        cause: error,
      },
    );
  } finally {
    await proc.stop();
  }
}
