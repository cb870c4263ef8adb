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
 *   BENCH_ARGS='{"databaseUrl":...,"brokers":[...],"aggregateType":...,"topic":...}' node --import tsx test/bench/kafka-limit.ts
 *
 * Prints one JSON line: {"event":"kafka-limit","events":N,"seconds":s,"cpuSeconds":c,"batches":b}.
 */
import pg from 'pg';
import pino from 'pino';
import type { OutboxEvent, Transaction } from '../../src/outbox/outbox-event.js';
import { benchSink, recordBuilderModule } from './dist.js';
import type { SinkRecord } from '../../src/sink/sink.js';
import { cutBatches } from './batching.js';

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
    const { rows } = await client.query<{ id: string; aggregate_type: string; aggregate_id: string; event_type: string; payload: string; headers: string | null; created_at: string; lsn: string }>(
      `select id::text, aggregate_type, aggregate_id, event_type, payload::text as payload, headers::text as headers, created_at::text as created_at
         from ${args.table} where aggregate_type = $1 order by ctid`,
      [args.aggregateType],
    );
    const builder = new RecordBuilder(args.topic);
    // A commit LSN of realistic width for the commit_lsn header (its value does not matter here).
    const txn: Transaction = { seq: 1, xid: 1, commitLsn: 0x1_a2b3c4d5n, commitTime: 0n, endLsn: null };
    return rows.map((r) => {
      const event: OutboxEvent = {
        id: r.id,
        aggregateType: r.aggregate_type,
        aggregateId: r.aggregate_id,
        eventType: r.event_type,
        payload: Buffer.from(r.payload),
        headers: r.headers ? (JSON.parse(r.headers) as Record<string, string>) : {},
        createdAt: r.created_at,
        table: args.table,
        txn,
      };
      return builder.build(event);
    });
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const records = await loadRecords();
  const batches = cutBatches(records, args.batchMaxMessages, args.batchMaxBytes);
  const logger = pino({ level: 'warn' });
  const sink = await benchSink(args.kafkaClient, { brokers: args.brokers, clientId: 'outbox-tail-bench-kafka-limit', retries: 5, connectTimeoutMs: 10_000, allowAutoTopicCreation: false, logger });
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
