/**
 * The Kafka limit: the Kafka client alone (through the relay's own KafkaSink,
 * a thin layer over kafkajs: idempotent, acks=all, one request in flight, the
 * Java-compatible partitioner) publishing the same records the relay would
 * build for a backlog, cut into batches by the relay's own rule
 * (batchMaxMessages / batchMaxBytes), one batch after the other.
 *
 * The records are read from the outbox table and built with the relay's
 * RecordBuilder before the clock starts; the clock runs from the first send
 * to the last acknowledgement (connecting is not timed).
 *
 *   BENCH_ARGS='{"databaseUrl":...,"brokers":[...],"aggregateType":...,"topic":...}' node --import tsx dev/bench/kafka-limit.ts
 *
 * Prints one JSON line: {"event":"kafka-limit","events":N,"seconds":s,"cpuSeconds":c,"batches":b}.
 */
import pg from 'pg';
import { benchSink, recordBuilderModule } from './dist.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { cutBatches } from './batching.js';
import { OUTBOX_ROW_COLUMNS, rowEvent, type OutboxRowText } from './outbox-row-event.js';

interface Args {
  databaseUrl: string;
  brokers: string[];
  aggregateType: string;
  table: string;
  topic: string;
  batchMaxMessages: number;
  batchMaxBytes: number;
  /** kafkajs or platformatic: the relay's sink of that client. */
  kafkaClient: string;
}

const args = JSON.parse(process.env.BENCH_ARGS ?? '{}') as Args;
const { RecordBuilder } = await recordBuilderModule();

async function loadRecords(): Promise<SinkRecord[]> {
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<OutboxRowText>(`select ${OUTBOX_ROW_COLUMNS} from ${args.table} where aggregate_type = $1 order by ctid`, [
      args.aggregateType,
    ]);
    const builder = new RecordBuilder(args.topic);
    return rows.map((r) => builder.build(rowEvent(r, args.table)));
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const records = await loadRecords();
  const batches = cutBatches(records, args.batchMaxMessages, args.batchMaxBytes);
  const sink = await benchSink(args.kafkaClient, args.brokers, 'outbox-tail-bench-kafka-limit');
  await sink.connect();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (const batch of batches) await sink.send(batch);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  await sink.disconnect();
  process.stdout.write(`${JSON.stringify({ event: 'kafka-limit', events: records.length, seconds, cpuSeconds, batches: batches.length })}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`kafka-limit: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
