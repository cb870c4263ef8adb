/**
 * --compression: the relay writes each codec on both clients and in both
 * delivery modes, and three other readers get the records back byte for byte:
 * Kafka's own Java consumer (ConsoleConsumer from the broker's jars), kcat
 * (librdkafka, bin/setup-kcat.sh) and the idempotent consumer (kafkajs with
 * our codecs). The matrix is covered as combinations: every codec on kafkajs in
 * exactly-once mode (its fast batch encoder, transactional batches and the
 * watermark) and on @platformatic/kafka at-least-once.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import type { Compression } from '../../src/kafka/compression-codecs.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import { createOffsetsTopic } from '../../src/sink/kafkajs/offsets-topic.js';
import { kafkaTool, topicBytes } from '../../dev/bench/topic-bytes.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor } from '../support/kafka.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';

const run = promisify(execFile);
const bed = relayTestbed();
const ROWS = 60;

const COMBINATIONS: Array<{ compression: Compression; client: 'kafkajs' | 'platformatic'; delivery: 'at-least-once' | 'exactly-once' }> = [
  // The reference: the same rows uncompressed, for the bytes on the broker.
  { compression: 'none', client: 'kafkajs', delivery: 'exactly-once' },
  { compression: 'gzip', client: 'kafkajs', delivery: 'exactly-once' },
  { compression: 'snappy', client: 'kafkajs', delivery: 'exactly-once' },
  { compression: 'lz4', client: 'kafkajs', delivery: 'exactly-once' },
  { compression: 'zstd', client: 'kafkajs', delivery: 'exactly-once' },
  { compression: 'gzip', client: 'platformatic', delivery: 'at-least-once' },
  { compression: 'snappy', client: 'platformatic', delivery: 'at-least-once' },
  { compression: 'lz4', client: 'platformatic', delivery: 'at-least-once' },
  { compression: 'zstd', client: 'platformatic', delivery: 'at-least-once' },
];

/** "key<TAB>value" lines, sorted: what each reader must print for a topic. */
const lines = (records: Array<{ key: string; value: string }>) => records.map((r) => `${r.key}\t${r.value}`).sort();

/** What Kafka's Java consumer reads (read_committed) from `topics`, per topic, as "key<TAB>value" lines. */
async function javaConsumer(topics: string[], brokers: string[]): Promise<Map<string, string[]>> {
  const stdout = await kafkaTool('org.apache.kafka.tools.consumer.ConsoleConsumer', [
    '--bootstrap-server',
    brokers.join(','),
    '--include',
    topics.map((t) => t.replace(/\./g, '\\.')).join('|'),
    '--from-beginning',
    '--isolation-level',
    'read_committed',
    '--max-messages',
    String(topics.length * ROWS),
    '--timeout-ms',
    '30000',
    '--property',
    'print.key=true',
    '--property',
    'print.partition=false',
    '--property',
    'print.value=true',
    '--property',
    'key.separator=\t',
    '--property',
    'print.headers=true',
    '--property',
    'headers.separator=,',
  ]);
  // With print.headers: "headers<TAB>key<TAB>value"; the topic is in the event_type header's row (our rows carry the topic's type).
  const byTopic = new Map<string, string[]>();
  for (const line of stdout.split('\n').filter(Boolean)) {
    const [headers, key, value] = line.split('\t') as [string, string, string];
    const type = /aggregate_type:([^,]+)/.exec(headers)?.[1];
    const topic = topics.find((t) => t === `outbox.event.${type}`);
    if (!topic) throw new Error(`the Java consumer printed a record of no topic of this test: ${line.slice(0, 200)}`);
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), `${key}\t${value}`]);
  }
  return byTopic;
}

async function kcat(topic: string, brokers: string[]): Promise<string[]> {
  const { stdout: path } = await run('bash', [`${process.cwd()}/bin/setup-kcat.sh`], { timeout: 120_000 });
  const { stdout } = await run(
    path.trim(),
    ['-C', '-b', brokers.join(','), '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%k\t%s\n'],
    { maxBuffer: 1 << 24, timeout: 60_000 },
  );
  return stdout.split('\n').filter(Boolean);
}

describe('--compression: every codec is read back byte for byte by Kafka’s Java consumer, kcat and our consumer', () => {
  it('gzip, snappy, lz4 and zstd on kafkajs (exactly-once) and @platformatic/kafka (at-least-once)', async () => {
    const written = new Map<string, string[]>();
    const admin = kafkaFor(bed.stack).admin();
    await admin.connect();
    try {
      for (const c of COMBINATIONS) {
        const type = uniqueName(`z_${c.compression}_${c.client}`);
        const topic = `outbox.event.${type}`;
        const offsetsTopic = uniqueName('offsets');
        await createTopicsAndWait(admin, [{ topic, numPartitions: 3 }]);
        if (c.delivery === 'exactly-once') await createOffsetsTopic(admin, offsetsTopic);
        const slot = uniqueName('slot');
        await createSlot(bed.db.url, slot);
        const relay = bed.relay(slot, {
          env: {
            OUTBOX_TAIL_COMPRESSION: c.compression,
            OUTBOX_TAIL_KAFKA_CLIENT: c.client,
            OUTBOX_TAIL_DELIVERY: c.delivery,
            ...(c.delivery === 'exactly-once' ? { OUTBOX_TAIL_OFFSETS_TOPIC: offsetsTopic } : {}),
          },
        });
        await relay.waitForLog(isStreaming);
        const rows = await query<{ aggregate_id: string; payload: string }>(
          bed.db.url,
          `insert into outbox(aggregate_type, aggregate_id, event_type, payload)
           select $1, 'key-' || (g % 20), 'Compressed', jsonb_build_object('n', g, 'text', repeat('order ' || g || ' ', 20)) from generate_series(1, ${ROWS}) g
           returning aggregate_id, payload::text`,
          [type],
        );
        await waitForConfirmed(bed.db.url, slot, await currentWalLsn(bed.db.url));
        await relay.kill();
        written.set(topic, lines(rows.map((r) => ({ key: r.aggregate_id, value: r.payload }))));
      }
    } finally {
      await admin.disconnect();
    }
    const topics = [...written.keys()];
    const topicOf = (c: (typeof COMBINATIONS)[number]) => topics.find((t) => t.includes(`z_${c.compression}_${c.client}`))!;

    // Compressed for real: each codec's topic holds well under the uncompressed one's bytes (the rows repeat text).
    const sizes = await topicBytes(bed.stack.brokers, topics);
    const plain = sizes.get(topicOf(COMBINATIONS[0]!))!;
    const ratios = COMBINATIONS.map((c) => `${c.compression}/${c.client}: ${((sizes.get(topicOf(c)) ?? 0) / plain).toFixed(2)}`);
    console.log(`bytes on the broker relative to none (${plain} bytes for ${ROWS} records): ${ratios.join(', ')}`);
    for (const c of COMBINATIONS.slice(1)) expect(sizes.get(topicOf(c)), `${c.compression} on ${c.client} is smaller on the broker`).toBeLessThan(plain * 0.6);

    const java = await javaConsumer(topics, bed.stack.brokers);
    for (const topic of topics) expect((java.get(topic) ?? []).sort(), `Kafka's Java consumer on ${topic}`).toEqual(written.get(topic));

    for (const topic of topics) expect((await kcat(topic, bed.stack.brokers)).sort(), `kcat on ${topic}`).toEqual(written.get(topic));

    const seen = new Map<string, Array<{ key: string; value: string }>>();
    const consumer = createIdempotentConsumer({
      brokers: bed.stack.brokers,
      groupId: uniqueName('g_compression'),
      topics,
      database: bed.db.url,
      handler: async (_tx, event) => {
        seen.set(event.topic, [...(seen.get(event.topic) ?? []), { key: event.key ?? '', value: event.rawPayload.toString('utf8') }]);
      },
    });
    try {
      await consumer.start();
      const deadline = Date.now() + 60_000;
      while ([...seen.values()].reduce((n, r) => n + r.length, 0) < topics.length * ROWS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    } finally {
      await consumer.stop();
    }
    for (const topic of topics) expect(lines(seen.get(topic) ?? []), `the idempotent consumer on ${topic}`).toEqual(written.get(topic));
  }, 300_000);
});
