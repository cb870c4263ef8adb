/**
 * The fault suite's Kafka collector: test/support's KafkaCollector tuned for
 * broker restarts. A killed broker makes the group rejoin; with the default
 * 30 s session the rejoin waits for the old member to expire, so this one uses
 * a short session, commits its offsets (a rejoin does not re-read everything)
 * and keeps each Kafka record once (topic, partition, offset), so the recount
 * counts what Kafka holds, not how often the collector read it. It reads
 * committed records only (kafkajs' default) unless built with readUncommitted.
 */
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { KafkaCollector } from '../support/kafka-collector.js';

export class FaultCollector extends KafkaCollector {
  private readonly offsets = new Set<string>();

  /** The topics must exist (created with their config by the caller). */
  override async start(topics: string[]): Promise<this> {
    const kafka = createKafka({ brokers: this.brokers, clientId: 'faults-collector', logLevel: logLevel.NOTHING, retry: { retries: 30, maxRetryTime: 2_000 } });
    const consumer = kafka.consumer({
      groupId: `faults-collector-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      maxWaitTimeInMs: 100,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      retry: { retries: 30, maxRetryTime: 2_000 },
      readUncommitted: this.isolation.readUncommitted ?? false,
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      autoCommitInterval: 1_000,
      eachMessage: async ({ topic, partition, message }) => {
        // After a rejoin, records since the last commit come again: keep each Kafka record once.
        const key = `${topic}\u0000${partition}\u0000${message.offset}`;
        if (this.offsets.has(key)) return;
        this.offsets.add(key);
        this.accept(topic, partition, message);
      },
    });
    return this;
  }
}
