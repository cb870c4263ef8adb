/**
 * What one Kafka transaction costs the exactly-once sink, without PostgreSQL
 * or the relay around it (docs/architecture.md, rule E7):
 *
 *   node --import tsx dev/bench/transaction-cycle.ts [--cycles N] [--records N] [--brokers H:P]
 *
 * A closed loop of Kafka transactions through TransactionalKafkaSink, each
 * `records` records to a 3-partition topic plus the watermark, exactly as
 * the relay sends its last batch (one produce request, then EndTxn), for
 * every combination of lanes (1, 2) and the coordinator cache (off, on).
 * The combinations run in alternating order, each after a warm-up, and are
 * reported side by side: mean and p99 time per transaction, and the
 * FindCoordinator and produce-side requests the brokers saw. Progress on
 * stderr, one JSON object on stdout.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pino from 'pino';
import { startStack } from '../stack/index.js';
import { Lsn } from '../../src/shared/lsn.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { TransactionalKafkaSink } from '../../src/sink/kafkajs/transactional-kafka-sink.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const { values: flags } = parseArgs({
  options: { cycles: { type: 'string' }, records: { type: 'string' }, warmup: { type: 'string' }, brokers: { type: 'string' } },
});
const cycles = Number(flags.cycles ?? 400);
const recordsPerTxn = Number(flags.records ?? 20);
const warmup = Number(flags.warmup ?? 100);
const log = (line: string) => process.stderr.write(`[transaction-cycle] ${line}\n`);

const stack = flags.brokers ? null : await startStack({ log: (l) => log(`  ${l}`) });
const brokers = flags.brokers?.split(',') ?? stack!.brokers;
const kafka = createKafka({ brokers, clientId: 'transaction-cycle', logLevel: logLevel.NOTHING });
const runId = Date.now().toString(36);
const topic = `transaction-cycle-${runId}`;
const offsetsTopic = `transaction-cycle-offsets-${runId}`;
const admin = kafka.admin();
await admin.connect();
await createTopicsAndWait(admin, [{ topic, numPartitions: 3 }]);
await createOffsetsTopic(admin, offsetsTopic);
await admin.disconnect();

// The cache wraps kafkajs's Cluster prototype once per process; "off" runs restore the original around them.
const require = createRequire(import.meta.url);
const Cluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator: unknown } };
const uncached = Cluster.prototype.findGroupCoordinator;
const logger = pino({ level: 'warn' }, pino.destination(2));

interface Result {
  lanes: number;
  coordinator_cache: boolean;
  cycles: number;
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  find_coordinator_requests: number;
  add_partitions_requests: number;
}

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const payload = 'x'.repeat(400);

async function run(lanes: number, cache: boolean, label: string): Promise<Result> {
  const sink = new TransactionalKafkaSink({
    brokers,
    clientId: `transaction-cycle-${label}`,
    logger,
    retries: 5,
    connectTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    allowAutoTopicCreation: false,
    slot: `cycle_${label}`,
    transactionalId: `transaction-cycle-${runId}-${label}`,
    offsetsTopic,
    transactionTimeoutMs: 60_000,
    lanes,
  });
  const cached = Cluster.prototype.findGroupCoordinator;
  if (!cache) Cluster.prototype.findGroupCoordinator = uncached;
  const counts = { find: 0, add: 0 };
  // The sink's producers are private: count their requests through kafkajs's instrumentation events on every producer made.
  const producer = Kafka.prototype.producer;
  Kafka.prototype.producer = function (this: Kafka, ...args: Parameters<Kafka['producer']>) {
    const p = producer.apply(this, args);
    p.on(p.events.REQUEST, ({ payload: r }) => {
      if (r.apiName === 'GroupCoordinator') counts.find++;
      if (r.apiName === 'AddPartitionsToTxn') counts.add++;
    });
    return p;
  };
  try {
    await sink.connect();
    const times: number[] = [];
    for (let c = 0; c < warmup + cycles; c++) {
      if (c === warmup) counts.find = counts.add = 0;
      const records: SinkRecord[] = Array.from({ length: recordsPerTxn }, (_, i) => ({
        topic,
        key: `k${c}-${i}`,
        value: Buffer.from(payload),
        headers: { id: `${c}-${i}` },
        bytes: payload.length,
      }));
      const t0 = performance.now();
      await sink.commit({ lsn: Lsn.of(BigInt(c + 1)), commitLsn: Lsn.of(BigInt(c + 1)), commitTime: null, count: recordsPerTxn }, records);
      if (c >= warmup) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    return {
      lanes,
      coordinator_cache: cache,
      cycles,
      mean_ms: round(mean),
      p50_ms: round(times[Math.floor(times.length * 0.5)]!),
      p99_ms: round(times[Math.floor(times.length * 0.99)]!),
      find_coordinator_requests: counts.find,
      add_partitions_requests: counts.add,
    };
  } finally {
    Kafka.prototype.producer = producer;
    Cluster.prototype.findGroupCoordinator = cached;
    await sink.disconnect();
  }
}

const combos: Array<[number, boolean]> = [
  [1, false],
  [2, false],
  [1, true],
  [2, true],
];
const results: Result[] = [];
try {
  // Two rounds, the second in reverse order, so that neither the first nor the last place favours a combination.
  for (const [round_, order] of [combos, [...combos].reverse()].entries()) {
    for (const [lanes, cache] of order) {
      const r = await run(lanes, cache, `r${round_}-l${lanes}-${cache ? 'c' : 'n'}`);
      log(
        `lanes ${lanes}, coordinator cache ${cache ? 'on ' : 'off'}: ${r.mean_ms} ms mean, p99 ${r.p99_ms} ms; ${r.find_coordinator_requests} FindCoordinator, ${r.add_partitions_requests} AddPartitionsToTxn for ${cycles} transactions`,
      );
      results.push(r);
    }
  }
} finally {
  await stack?.stop();
}
process.stdout.write(
  `${JSON.stringify({ records_per_transaction: recordsPerTxn, brokers: stack ? `native Kafka ${stack.versions.kafka}` : 'given', results })}\n`,
);
