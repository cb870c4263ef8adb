/**
 * The Kafka-side floor under a steady rate: the relay's own sink (KafkaSink
 * over kafkajs: idempotent, acks=all, one request in flight) fed `rate`
 * records a second, paced against the wall clock, dispatched by the relay's
 * rule (a request as soon as the previous one was acknowledged, carrying
 * everything queued up to the batch limits). No PostgreSQL in the path: what
 * is left of the relay's steady latency once decoding, the walsender and the
 * commit are taken out. The bench runs it while its writer writes the same
 * rate into the outbox table, so the machine carries the same database load.
 *
 * Latency per record: from the moment it is queued to its acknowledgement
 * (the relay's figure ends at the broker's append time, a little earlier).
 * Records queued during the warm-up are sent but not timed.
 *
 *   BENCH_ARGS='{"databaseUrl":...,"brokers":[...],"topic":...,"rate":5000,"seconds":30,"warmupSeconds":2,...}' node --import tsx dev/bench/kafka-latency-floor.ts
 *
 * Prints one JSON line: {"event":"kafka-latency-floor","records":N,"p50":ms,"p99":ms,"p999":ms,"max":ms,"requests":r,"cpuSeconds":c}.
 */
import pg from 'pg';
import { benchSink, recordBuilderModule } from './dist.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { PAYLOAD_SQL } from './bench-db.js';
import { OUTBOX_ROW_COLUMNS, rowEvent, type OutboxRowText } from './outbox-row-event.js';

interface Args {
  databaseUrl: string;
  brokers: string[];
  topic: string;
  rate: number;
  seconds: number;
  warmupSeconds: number;
  batchMaxMessages: number;
  batchMaxBytes: number;
  kafkaClient: string;
}

const args = JSON.parse(process.env.BENCH_ARGS ?? '{}') as Args;
const { RecordBuilder } = await recordBuilderModule();

/** Records of the writer's shape (its payload SQL, 10,000 keys), built by the relay's RecordBuilder before the clock starts. */
async function buildRecords(count: number): Promise<SinkRecord[]> {
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<OutboxRowText>(
      `select ${OUTBOX_ROW_COLUMNS} from (select gen_random_uuid() as id, 'bench_floor' as aggregate_type, (g % 10000)::text as aggregate_id,
         'OrderCreated' as event_type, ${PAYLOAD_SQL} as payload, null::jsonb as headers, now() as created_at from generate_series(1, $1) g) r`,
      [count],
    );
    const builder = new RecordBuilder(args.topic);
    return rows.map((r) => builder.build(rowEvent(r, 'public.outbox')));
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const warmup = Math.round(args.rate * args.warmupSeconds);
  const total = warmup + Math.round(args.rate * args.seconds);
  const records = await buildRecords(total);
  const sink = await benchSink(args.kafkaClient, args.brokers, 'outbox-tail-bench-latency-floor');
  await sink.connect();
  // The bench starts its writer on this line, so both run over the same seconds.
  process.stdout.write(`${JSON.stringify({ event: 'kafka-latency-floor-ready' })}\n`);
  const queuedAt = new Float64Array(total);
  const latencies: number[] = [];
  const queue: number[] = [];
  let next = 0;
  let requests = 0;
  let inFlight = false;
  let failure: unknown = null;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const dispatch = () => {
    if (inFlight || queue.length === 0) return;
    const batch: number[] = [];
    let bytes = 0;
    while (queue.length > 0 && batch.length < args.batchMaxMessages && (batch.length === 0 || bytes + records[queue[0]!]!.bytes <= args.batchMaxBytes)) {
      const i = queue.shift()!;
      bytes += records[i]!.bytes;
      batch.push(i);
    }
    inFlight = true;
    requests++;
    sink.send(batch.map((i) => records[i]!)).then(
      () => {
        const now = performance.now();
        for (const i of batch) if (i >= warmup) latencies.push(now - queuedAt[i]!);
        inFlight = false;
        if (batch[batch.length - 1] === total - 1) finish();
        else dispatch();
      },
      (error: unknown) => {
        failure = error;
        finish();
      },
    );
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Paced against the wall clock: every tick queues what is due by now, so a late tick catches up instead of slowing the rate.
  const timer = setInterval(() => {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - t0) / 1000) * args.rate));
    for (; next < due; next++) {
      // When it was queued, as the writer times an INSERT from when it was sent.
      queuedAt[next] = now;
      queue.push(next);
    }
    if (next >= total) clearInterval(timer);
    dispatch();
  }, 1);
  await done;
  clearInterval(timer);
  if (failure) throw failure;
  const cpu = process.cpuUsage(cpu0);
  await sink.disconnect();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))]! * 10) / 10;
  const line = {
    event: 'kafka-latency-floor',
    records: latencies.length,
    p50: at(50),
    p99: at(99),
    p999: at(99.9),
    max: at(100),
    requests,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`kafka-latency-floor: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
