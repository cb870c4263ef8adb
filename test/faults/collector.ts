/**
 * The fault suite's Kafka collector: test/support's KafkaCollector tuned for
 * broker restarts. A killed broker makes the group rejoin; with the default
 * 30 s session the rejoin waits for the old member to expire, so this one uses
 * a short session, commits its offsets (a rejoin does not re-read everything)
 * and keeps each Kafka record once (topic, partition, offset), so the recount
 * counts what Kafka holds, not how often the collector read it.
 */
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { CollectedRecord } from '../support/kafka-collector.js';

export class FaultCollector {
  readonly records: CollectedRecord[] = [];
  private readonly ids = new Set<string>();
  private readonly offsets = new Set<string>();
  private consumer: Consumer | null = null;
  private waiters: Array<() => void> = [];

  constructor(private readonly brokers: string[]) {}

  /** The topics must exist (created with their config by the caller). */
  async start(topics: string[]): Promise<this> {
    const kafka = new Kafka({ brokers: this.brokers, clientId: 'faults-collector', logLevel: logLevel.NOTHING, retry: { retries: 30, maxRetryTime: 2_000 } });
    const consumer = kafka.consumer({
      groupId: `faults-collector-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      maxWaitTimeInMs: 100,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      retry: { retries: 30, maxRetryTime: 2_000 },
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      autoCommitInterval: 1_000,
      eachMessage: async ({ topic, partition, message }) => {
        const key = `${topic}\u0000${partition}\u0000${message.offset}`;
        if (this.offsets.has(key)) return;
        this.offsets.add(key);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = Buffer.isBuffer(v) ? v.toString() : String(v);
        this.records.push({ topic, partition, offset: message.offset, key: message.key?.toString() ?? null, value: message.value, headers, timestamp: Number(message.timestamp) });
        if (headers.id) this.ids.add(headers.id);
        for (const w of this.waiters.splice(0)) w();
      },
    });
    return this;
  }

  /** Distinct outbox ids seen (the `id` header, topic and dead-letter topic); live view. */
  distinctIds(): ReadonlySet<string> {
    return this.ids;
  }

  async waitUntil(predicate: (c: this) => boolean, timeoutMs = 30_000, what = 'records'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: have ${this.records.length} records, ${this.ids.size} distinct ids`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
  }
}
