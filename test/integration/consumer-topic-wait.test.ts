/**
 * A consumer deployed before the relay published its first event: its topic
 * does not exist yet. It waits (logged once, counted in topicsAwaited) and
 * joins as soon as the topic appears, instead of failing with
 * UNKNOWN_TOPIC_OR_PARTITION as kafkajs' subscribe does.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import { consumerTestbed } from '../support/consumer-testbed.js';
import { uniqueName } from '../support/database.js';
import { tempDir } from '../support/temp-dir.js';

const bed = consumerTestbed({ clientId: 'consumer-topic-wait-test' });
const { stack, consumers, produce, committed, effectsById, waitFor, recordEffect } = bed;
const dir = tempDir('outbox-tail-consumer-db-');

describe('the idempotent consumer waits for a topic that does not exist yet', () => {
  it('run() started before its topic exists waits, then applies the first event once the topic is created', async () => {
    const topic = uniqueName('outbox.event.not_yet');
    const groupId = uniqueName('g_wait');
    const id = randomUUID();
    // The database as a connection whose password is read at every connection (the relay's --pg-password-file).
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, 'any-password\n');
    const c = createIdempotentConsumer({
      brokers: stack.brokers,
      groupId,
      topics: [topic],
      database: { url: bed.db.url, passwordFile },
      handler: recordEffect(groupId),
    });
    consumers.push(c);
    let outcome: string | null = null;
    c.run().then(
      () => (outcome = 'ended'),
      (error: Error) => (outcome = `failed: ${error.message}`),
    );
    await waitFor('the consumer to report the missing topic', () => c.stats.topicsAwaited.includes(topic));
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(outcome, 'the consumer is still waiting, not failed').toBeNull();
    expect(c.stats.state).toBe('starting');

    await createTopicsAndWait(bed.admin, [{ topic, numPartitions: 1 }]);
    await produce(topic, [{ id }]);
    await waitFor('the first event applied', async () => (await effectsById(groupId))[id] === 1, 30_000);
    // The group's coordinator may still be loading on a fresh broker: a failed look is a "not yet".
    await waitFor('its offset committed', async () => (await committed(groupId, topic).catch(() => -1)) === 1, 30_000);
    expect(await effectsById(groupId)).toEqual({ [id]: 1 });
    expect(c.stats.topicsAwaited).toEqual([]);
    expect(outcome).toBeNull();
  }, 60_000);

  it('stop() while waiting ends run() without an error', async () => {
    const c = createIdempotentConsumer({
      brokers: stack.brokers,
      groupId: uniqueName('g_wait_stop'),
      topics: [uniqueName('never')],
      database: bed.db.url,
      handler: async () => {},
    });
    const run = c.run();
    await waitFor('the consumer to wait', () => c.stats.topicsAwaited.length === 1);
    await c.stop();
    await expect(run).resolves.toBeUndefined();
    expect(c.stats.state).toBe('stopped');
  }, 30_000);
});
