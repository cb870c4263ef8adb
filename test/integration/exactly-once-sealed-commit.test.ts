/**
 * Rule E8 (docs/architecture.md#exactly-once): the exactly-once sink seals a
 * Kafka transaction (last batch and watermark acknowledged, EndTxn sent) and
 * lets the next lane's transaction take records while that EndTxn is
 * pending, but never seals the next one before the EndTxn succeeded. Here,
 * against the real broker, lane 1's EndTxn is held back, lane 1 is fenced
 * from outside (its open transaction aborted, as a standby's start or the
 * broker's transaction timeout would), and then the EndTxn fails: the
 * transaction on lane 2 must never commit. The negative control seals lane 2
 * without waiting: its records and its watermark commit, and the watermark
 * then covers the PostgreSQL transaction of lane 1, which no read_committed
 * consumer will ever see (lost at the next start, which skips up to it).
 */
import { type Kafka, logLevel, type Transaction as KafkaTransaction } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import type { WatermarkPosition } from '../../src/sink/sink.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import { laneTransactionalId, TransactionalKafkaSink, type Lane, type TransactionalKafkaSinkOptions } from '../../src/sink/kafkajs/transactional-kafka-sink.js';
import { uniqueName } from '../support/database.js';
import { getStack } from '../support/stack.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

/** The real sink, with lane 1's first EndTxn held until release(). */
class HeldEndTxnSink extends TransactionalKafkaSink {
  private held = true;
  private releaseHeld!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.releaseHeld = resolve));
  constructor(
    options: TransactionalKafkaSinkOptions,
    private readonly firstLaneId: string,
  ) {
    super(options);
  }
  release(): void {
    this.releaseHeld();
  }
  protected override async endTxn(lane: Readonly<Lane>, txn: KafkaTransaction): Promise<void> {
    if (this.held && lane.transactionalId === this.firstLaneId) {
      this.held = false;
      await this.gate;
    }
    return super.endTxn(lane, txn);
  }
}

/** Broken: seals the next Kafka transaction without waiting for the previous EndTxn. */
class NoWaitSink extends HeldEndTxnSink {
  protected override async previousCommit(): Promise<void> {}
}

const record = (topic: string, key: string): SinkRecord => ({ topic, key, value: Buffer.from(`{"key":"${key}"}`), headers: { id: key }, bytes: 40 });
const position = (lsn: bigint): WatermarkPosition => ({ lsn: Lsn.of(lsn), commitLsn: Lsn.of(lsn - 8n), commitTime: null, count: 1 });

/** Everything a read_committed consumer sees in `topic` up to a plain end marker written now. */
async function committedKeys(kafka: Kafka, topic: string): Promise<string[]> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ key: 'end-marker', value: 'end' }] });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: uniqueName('sealed_reader'), readUncommitted: false });
  const keys: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no end marker in ${topic} within 30 s (saw ${keys.join(', ')})`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          const key = message.key?.toString() ?? '';
          if (key === 'end-marker') {
            clearTimeout(timer);
            resolve();
          } else keys.push(key);
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return keys;
}

async function heldEndTxnThenFenced(variant: 'correct' | 'no-wait') {
  const stack = getStack();
  const kafka = createKafka({ brokers: stack.brokers, clientId: 'eo-sealed', logLevel: logLevel.NOTHING });
  const slot = uniqueName('eo_sealed');
  const topic = `${slot}.order`;
  const offsetsTopic = `${slot}_offsets`;
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }]);
  await createOffsetsTopic(admin, offsetsTopic);
  await admin.disconnect();

  const transactionalId = `outbox-tail-${slot}`;
  const options: TransactionalKafkaSinkOptions = {
    brokers: stack.brokers,
    clientId: 'eo-sealed',
    retries: 2,
    connectTimeoutMs: 5_000,
    requestTimeoutMs: 30_000,
    allowAutoTopicCreation: false,
    logger: pino({ level: 'silent' }),
    slot,
    transactionalId,
    offsetsTopic,
    transactionTimeoutMs: 60_000,
    lanes: 2,
  };
  const sink = variant === 'correct' ? new HeldEndTxnSink(options, transactionalId) : new NoWaitSink(options, transactionalId);
  await sink.connect();
  try {
    await sink.send([record(topic, 'first')]);
    const first = await sink.seal(position(100n));
    const firstOutcome = first.committed.then(
      () => 'committed',
      (error: { code?: string }) => `failed ${error.code}`,
    );
    // Lane 2 takes the next records while lane 1's EndTxn is pending.
    await sink.send([record(topic, 'second')]);
    const second = sink.seal(position(200n)).then(({ committed }) => committed);
    const secondOutcome = second.then(
      () => 'committed',
      (error: { code?: string }) => `failed ${error.code}`,
    );
    // Lane 1 is fenced from outside: its open transaction is aborted by the coordinator.
    const fencer = kafka.producer({ transactionalId: laneTransactionalId(transactionalId, 0), idempotent: true, maxInFlightRequests: 1 });
    await fencer.connect();
    const fencing = await fencer.transaction();
    await fencing.abort();
    await fencer.disconnect();
    sink.release();
    const outcomes = { first: await firstOutcome, second: await secondOutcome };
    await sink.disconnect();
    const visible = await committedKeys(kafka, topic);
    const watermark = await new TransactionalKafkaSink(options).readWatermark();
    return { outcomes, visible, watermark: watermark ? watermark.lsn : null };
  } finally {
    await sink.disconnect();
  }
}

describe('exactly-once: the next Kafka transaction is sealed only after the previous EndTxn succeeded (rule E8)', () => {
  it('a failed EndTxn on lane 1 keeps the transaction on lane 2 from committing: nothing visible, no watermark', async () => {
    const r = await heldEndTxnThenFenced('correct');
    expect(r.outcomes).toEqual({ first: 'failed KAFKA_PRODUCER_FENCED', second: 'failed KAFKA_PRODUCER_FENCED' });
    expect(r.visible).toEqual([]);
    expect(r.watermark).toBeNull();
  }, 120_000);

  it('negative control: sealing lane 2 without waiting commits a watermark past a transaction no consumer will see', async () => {
    const r = await heldEndTxnThenFenced('no-wait');
    expect(r.outcomes).toEqual({ first: 'failed KAFKA_PRODUCER_FENCED', second: 'committed' });
    expect(r.visible).toEqual(['second']);
    // The watermark covers LSN 100 (the first transaction), which was never committed: a restart skips it.
    expect(r.watermark).toBe(200n);
  }, 120_000);
});
