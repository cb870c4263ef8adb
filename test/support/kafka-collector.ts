import { logLevel, type Consumer, type KafkaMessage } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

export interface CollectedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  timestamp: number;
  /** The record batch's producer (id/epoch) and whether it was transactional: which relay session wrote a copy. */
  producer?: string;
}

/** Reads topics from the beginning and keeps every record, for recounting. */
export class KafkaCollector {
  readonly records: CollectedRecord[] = [];
  private readonly ids = new Set<string>();
  protected consumer: Consumer | null = null;
  private waiters: Array<() => void> = [];

  /** readUncommitted: also records of open and aborted Kafka transactions (the default, like kafkajs's, reads committed only). */
  constructor(
    protected readonly brokers: string[],
    protected readonly isolation: { readUncommitted?: boolean } = {},
  ) {}

  async start(topics: (string | RegExp)[]): Promise<this> {
    const kafka = createKafka({ brokers: this.brokers, clientId: 'test-collector', logLevel: logLevel.NOTHING });
    // Topics may not exist yet: create them so the subscription does not miss them.
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsAndWait(
      admin,
      topics.filter((t): t is string => typeof t === 'string').map((topic) => ({ topic })),
    );
    await admin.disconnect();
    const consumer = kafka.consumer({
      groupId: `collector-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      maxWaitTimeInMs: 100,
      readUncommitted: this.isolation.readUncommitted ?? false,
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({ autoCommit: false, eachMessage: async ({ topic, partition, message }) => this.accept(topic, partition, message) });
    return this;
  }

  /** Keeps one consumed record (headers as strings) and wakes the waiters. */
  protected accept(topic: string, partition: number, message: KafkaMessage): void {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = Buffer.isBuffer(v) ? v.toString() : String(v);
    this.records.push({
      topic,
      partition,
      offset: message.offset,
      key: message.key?.toString() ?? null,
      value: message.value,
      headers,
      timestamp: Number(message.timestamp),
      producer: producerOf(message),
    });
    if (headers.id) this.ids.add(headers.id);
    for (const w of this.waiters.splice(0)) w();
  }

  /** Distinct outbox ids seen (the `id` header); live view, do not mutate. */
  distinctIds(): ReadonlySet<string> {
    return this.ids;
  }

  /** Waits until `predicate` holds, or fails with a count in the message. */
  async waitUntil(predicate: (c: this) => boolean, timeoutMs = 30_000, what = 'records'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: have ${this.records.length} records, ${this.distinctIds().size} distinct ids`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  async waitForDistinct(count: number, timeoutMs = 30_000): Promise<void> {
    await this.waitUntil((c) => c.distinctIds().size >= count, timeoutMs, `${count} distinct ids`);
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

/** kafkajs keeps each record's batch header on the message (untyped): producer id/epoch and "txn" for a transactional batch. */
function producerOf(message: KafkaMessage): string | undefined {
  const batch = (message as { batchContext?: { producerId?: string; producerEpoch?: number; inTransaction?: boolean } }).batchContext;
  if (!batch || batch.producerId === undefined || batch.producerId === '-1') return undefined;
  return `${batch.producerId}/${batch.producerEpoch}${batch.inTransaction ? ' txn' : ''}`;
}
