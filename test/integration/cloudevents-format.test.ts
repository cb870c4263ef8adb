import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, type CloudEventV1, type KafkaMessage } from 'cloudevents';
import { logLevel, Partitioners } from 'kafkajs';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdempotentConsumer, type ConsumedEvent } from '../../src/consumer/index.js';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import type { VerifyReport } from '../../src/commands/verify/verify-outbox.js';
import { uniqueName } from '../support/database.js';
import type { CollectedRecord } from '../support/kafka-collector.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { runCli } from '../support/run-cli.js';
import { createSlot, query } from '../support/slot.js';

// --record-format cloudevents-binary|cloudevents-structured against a real
// PostgreSQL and Kafka (docs/cloudevents.md): every record the relay writes,
// from a table row and from an outbox_tail.emit() message (--source both),
// must parse with the cloudevents npm SDK's Kafka binding and with the
// CloudEvents Java SDK's Kafka deserializer (test/support/java/CloudEventsDump.java,
// jars fetched by bin/setup-cloudevents-java.sh), and the idempotent consumer
// and verify must read it back; each parsed event is compared with the outbox.
const bed = relayTestbed();
const run = promisify(execFile);
const SETUP = fileURLToPath(new URL('../../bin/setup-cloudevents-java.sh', import.meta.url));
let classpath = '';

beforeAll(async () => {
  const started = Date.now();
  // Fails (never skips) without Maven Central or a JDK: CI must have them.
  const { stdout } = await run('bash', [SETUP], { maxBuffer: 1 << 20 });
  classpath = stdout.trim().split('\n').pop()!;
  console.log(`cloudevents-java: classpath ready in ${Date.now() - started} ms`);
}, 300_000);

/** One outbox event as the database holds it. */
interface Expected {
  id: string;
  type: string;
  subject: string;
  source: string;
  /** created_at as RFC 3339 (to_json of the timestamptz). */
  time: string;
  data: unknown;
}

/** Java's OffsetDateTime and the JS SDK print the same instant differently: compare in microseconds since the epoch. */
function micros(rfc3339: string): bigint {
  const m = /^(.*T\d\d:\d\d(?::\d\d)?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(rfc3339);
  if (!m) throw new Error(`not RFC 3339: ${rfc3339}`);
  const [, whole, frac = '', zone] = m;
  return BigInt(Date.parse(`${whole}${zone}`)) * 1000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
}

/** The Java program's reading of a topic: one line per record. */
interface JavaLine {
  offset: number;
  error?: string;
  key?: string;
  specversion?: string;
  id?: string;
  source?: string;
  type?: string;
  subject?: string | null;
  time?: string | null;
  datacontenttype?: string | null;
  extensions?: Record<string, string>;
  data?: string | null;
}

async function javaRead(topic: string, records: number): Promise<JavaLine[]> {
  const { stdout } = await run('java', ['-cp', classpath, 'CloudEventsDump', bed.stack.brokers.join(','), topic, String(records), '60000'], {
    maxBuffer: 16 << 20,
    timeout: 90_000,
  });
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as JavaLine);
}

/** The record through the cloudevents SDK's Kafka binding; validate() throws on anything the spec forbids. */
function jsParse(r: CollectedRecord): CloudEventV1<unknown> {
  const event = Kafka.toEvent({ key: r.key!, value: r.value!, headers: r.headers, body: r.value } as KafkaMessage) as CloudEventV1<unknown> & {
    validate(): boolean;
  };
  expect(event.validate()).toBe(true);
  return event;
}

/** Inserts table rows and emits messages, in two transactions, and returns what each event must look like. */
async function writeEvents(type: string): Promise<Expected[]> {
  const payloads = ['{"n": 1, "s": "ü☕"}', '{"nested": {"a": [1, 2.50]}, "line": "a\\nb"}', '[1, "two", null]'];
  const expected: Expected[] = [];
  const rows = await query<{ id: string; aggregate_id: string; event_type: string; time: string; payload: string }>(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers)
     select $1, 'agg-' || i, 'Row' || i, ($2::text[])[i]::jsonb, '{"tenant": "acme"}'::jsonb from generate_series(1, 3) i
     returning id::text, aggregate_id, event_type, to_json(created_at) #>> '{}' as time, payload::text`,
    [type, payloads],
  );
  for (const r of rows) {
    expected.push({ id: r.id, type: r.event_type, subject: r.aggregate_id, source: '/outbox-tail/public.outbox', time: r.time, data: JSON.parse(r.payload) });
  }
  const client = new pg.Client({ connectionString: bed.db.url });
  await client.connect();
  try {
    await client.query('begin');
    for (const [i, payload] of payloads.entries()) {
      const { rows: emitted } = await client.query<{ id: string; time: string; payload: string }>(
        `select outbox_tail.emit($1, $2, $3, $4::jsonb)::text as id, to_json(now()) #>> '{}' as time, $4::jsonb::text as payload`,
        [type, `msg-${i}`, `Message${i}`, payload],
      );
      const e = emitted[0]!;
      // An emitted event's table is its message prefix (default outbox-tail).
      expected.push({ id: e.id, type: `Message${i}`, subject: `msg-${i}`, source: '/outbox-tail/outbox-tail', time: e.time, data: JSON.parse(e.payload) });
    }
    await client.query('commit');
  } finally {
    await client.end();
  }
  return expected;
}

/** Runs the idempotent consumer over `topic` until it has handled `ids`; returns the events its handler saw. */
async function consume(topic: string, ids: string[]): Promise<Map<string, ConsumedEvent>> {
  const seen = new Map<string, ConsumedEvent>();
  const groupId = uniqueName('g_ce');
  const consumer = createIdempotentConsumer({
    brokers: bed.stack.brokers,
    groupId,
    topics: [topic],
    database: bed.db.url,
    consumer: { maxWaitTimeInMs: 100 },
    kafka: { logLevel: logLevel.NOTHING },
    handler: async (_tx, e) => {
      seen.set(e.id, e);
    },
  });
  await consumer.start();
  try {
    const deadline = Date.now() + 30_000;
    while (!ids.every((id) => seen.has(id))) {
      if (Date.now() > deadline) throw new Error(`idempotent consumer: handled ${seen.size} of ${ids.length} events`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await consumer.stop();
  }
  const processed = await query<{ message_id: string }>(bed.db.url, `select message_id from processed_messages where consumer_group = $1`, [groupId]);
  expect(processed.map((p) => p.message_id).sort()).toEqual([...ids].sort());
  return seen;
}

describe('--record-format cloudevents-* (real Postgres and Kafka, the JS and the Java CloudEvents SDKs)', () => {
  for (const mode of ['binary', 'structured'] as const) {
    it(`cloudevents-${mode}: every record of a table row and of a message parses with both SDKs, carries the outbox's id, type, subject, time and data, and the consumer and verify read it`, async () => {
      const type = uniqueName(`ce_${mode}`);
      const topic = `outbox.event.${type}`;
      const slot = uniqueName('slot');
      await createSlot(bed.db.url, slot);
      const collector = await bed.collect([topic]);
      await bed.relay(slot, { env: { OUTBOX_TAIL_SOURCE: 'both', OUTBOX_TAIL_RECORD_FORMAT: `cloudevents-${mode}` } }).waitForLog(isStreaming);
      const from = new Date(Date.now() - 1_000).toISOString();
      const expected = await writeEvents(type);
      await collector.waitUntil((c) => c.records.length >= expected.length, 30_000, `${expected.length} records`);
      const byId = new Map(expected.map((e) => [e.id, e]));
      expect(byId.size).toBe(6);

      // The records themselves: the binding's content type, the key = aggregate id, user headers passed on.
      for (const r of collector.records) {
        expect(r.headers['content-type']).toBe(mode === 'binary' ? 'application/json' : 'application/cloudevents+json');
        expect(r.headers.id).toBeUndefined();
      }

      // The cloudevents npm SDK.
      const js = collector.records.map(jsParse);
      expect(js.map((e) => e.id).sort()).toEqual([...byId.keys()].sort());
      for (const [i, e] of js.entries()) {
        const want = byId.get(e.id)!;
        expect(e).toMatchObject({ specversion: '1.0', type: want.type, subject: want.subject, source: want.source, datacontenttype: 'application/json' });
        expect(e.data).toEqual(want.data);
        expect(collector.records[i]!.key).toBe(want.subject);
        // The JS SDK keeps milliseconds only.
        expect(Date.parse(e.time!)).toBe(Number(micros(want.time) / 1000n));
      }

      // The CloudEvents Java SDK's Kafka deserializer.
      const java = await javaRead(topic, expected.length);
      expect(java.filter((l) => l.error !== undefined)).toEqual([]);
      expect(java.map((l) => l.id).sort()).toEqual([...byId.keys()].sort());
      for (const l of java) {
        const want = byId.get(l.id!)!;
        expect(l).toMatchObject({ specversion: '1.0', type: want.type, subject: want.subject, source: want.source, key: want.subject });
        expect(l.datacontenttype).toBe('application/json');
        expect(micros(l.time!)).toBe(micros(want.time));
        expect(JSON.parse(l.data!)).toEqual(want.data);
        expect(l.extensions).toMatchObject({ aggregatetype: type, commitlsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/) });
      }

      // The idempotent consumer: deduplicates on the CloudEvent id, hands over the payload.
      const consumed = await consume(topic, [...byId.keys()]);
      for (const [id, want] of byId) {
        expect(consumed.get(id)).toMatchObject({ eventType: want.type, aggregateId: want.subject, aggregateType: type, payload: want.data });
        expect(micros(consumed.get(id)!.createdAt!)).toBe(micros(want.time));
      }

      // verify finds the ids (and times) in CloudEvents records: the 3 rows are all there; the 3 messages have no row.
      const verify = await runCli(['verify', '--from', from, '--json'], {
        OUTBOX_TAIL_DATABASE_URL: bed.db.url,
        OUTBOX_TAIL_BROKERS: bed.stack.brokers.join(','),
        OUTBOX_TAIL_RECORD_FORMAT: `cloudevents-${mode}`,
      });
      expect(verify.code, verify.stderr).toBe(0);
      expect((JSON.parse(verify.stdout) as VerifyReport).topics.find((t) => t.topic === topic)).toMatchObject({ rows: 3, missing: 0, unknown: 3 });
    });
  }

  it('the Java check is not vacuous: records that break the CloudEvents binding come back as errors', async () => {
    const topic = uniqueName('ce_broken');
    const kafka = createKafka({ brokers: bed.stack.brokers, clientId: 'ce-broken', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await admin.connect();
    await producer.connect();
    try {
      await createTopicsAndWait(admin, [{ topic }]);
      const ce = { ce_specversion: '1.0', ce_id: 'x-1', ce_source: '/s', ce_type: 'T', 'content-type': 'application/json' };
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { key: 'k', value: '{}', headers: { ...ce, ce_specversion: '0.1' } },
          { key: 'k', value: '{"id": "x-2", "source": "/s", "type": "T", "data": {}}', headers: { 'content-type': 'application/cloudevents+json' } },
          { key: 'k', value: '{}', headers: ce },
        ],
      });
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
    const lines = await javaRead(topic, 3);
    expect(lines.map((l) => (l.error === undefined ? 'ok' : 'error'))).toEqual(['error', 'error', 'ok']);
  });
});
