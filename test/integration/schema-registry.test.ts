import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../dev/stack/process.js';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import { RegistryClient } from '../../src/schema-registry/registry-client.js';
import { unframe } from '../../src/schema-registry/wire-format.js';
import { uniqueName } from '../support/database.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { startSchemaRegistry, type SchemaRegistryProcess } from '../support/schema-registry.js';
import { confirmedFlushLsn, createSlot, query } from '../support/slot.js';
import { peekTransactions } from '../support/witness-slot.js';

const bed = relayTestbed();
let registry: SchemaRegistryProcess;
let javaClasses: string;

const ORDER_AVRO = JSON.stringify({
  type: 'record',
  name: 'OrderCreated',
  namespace: 'shop',
  fields: [
    { name: 'orderId', type: 'string' },
    { name: 'amount', type: 'int' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
});

beforeAll(async () => {
  registry = await startSchemaRegistry();
  console.log(`schema registry: Apicurio on ${registry.url}, started in ${registry.startMs} ms`);
  // The Java reader, compiled once against Apicurio's serde jars.
  javaClasses = mkdtempSync(join(tmpdir(), 'outbox-tail-java-'));
  const javac = await run('javac', ['-cp', `${registry.serdeLibDir}/*`, '-d', javaClasses, 'test/support/java/ReadAvroRecords.java'], { timeoutMs: 120_000 });
  if (javac.code !== 0) throw new Error(`javac failed:\n${javac.output}`);
}, 1_500_000);

afterAll(async () => {
  await registry?.dispose();
});

const insert = (type: string, aggregateId: string, payload: unknown) =>
  query<{ id: string }>(
    bed.db.url,
    `insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'OrderCreated', $3) returning id::text`,
    [type, aggregateId, JSON.stringify(payload)],
  ).then((r) => r[0]!.id);

async function registerOrderSchema(type: string): Promise<number> {
  return new RegistryClient({ url: registry.url }).register(`outbox.event.${type}-value`, 'AVRO', ORDER_AVRO);
}

const avroEnv = (extra: Record<string, string> = {}) => ({
  OUTBOX_TAIL_VALUE_FORMAT: 'avro',
  OUTBOX_TAIL_SCHEMA_REGISTRY_URL: registry.url,
  ...extra,
});

describe('--value-format avro against a real schema registry (Apicurio, Confluent API)', () => {
  it('publishes Avro in the Confluent wire format that the consumer module and a Java Avro deserializer read back; a payload that breaks the schema is dead-lettered', async () => {
    const type = uniqueName('avro');
    const topic = `outbox.event.${type}`;
    const dlt = uniqueName('dlt');
    const schemaId = await registerOrderSchema(type);
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic, dlt]);
    const r = bed.relay(slot, { env: avroEnv({ OUTBOX_TAIL_ON_MALFORMED: 'dead-letter', OUTBOX_TAIL_DEAD_LETTER_TOPIC: dlt }) });
    await r.waitForLog(isStreaming);
    const good = [
      { orderId: 'o-1', amount: 10 },
      { orderId: 'o-2', amount: 20, note: 'gift' },
      { orderId: 'o-3', amount: 30 },
    ];
    const ids = [await insert(type, 'a', good[0]), await insert(type, 'b', good[1])];
    const badId = await insert(type, 'bad', { orderId: 'o-x', amount: 'lots' });
    ids.push(await insert(type, 'c', good[2]));
    await collector.waitUntil((c) => c.records.filter((x) => x.topic === topic).length >= 3 && c.records.some((x) => x.topic === dlt));

    const published = collector.records.filter((x) => x.topic === topic);
    expect(published.map((x) => unframe(x.value!)?.schemaId)).toEqual([schemaId, schemaId, schemaId]);
    const pointer = collector.records.find((x) => x.topic === dlt)!;
    expect(JSON.parse(pointer.value!.toString())).toMatchObject({
      id: badId,
      original_topic: topic,
      reason: expect.stringContaining('schema: payload does not fit'),
    });

    // The idempotent consumer decodes by schema id.
    const seen = new Map<string, unknown>();
    const consumer = createIdempotentConsumer({
      brokers: bed.stack.brokers,
      groupId: uniqueName('g'),
      topics: [topic],
      database: bed.db.url,
      schemaRegistry: { url: registry.url },
      handler: async (_tx, event) => void seen.set(event.id, { ...(event.payload as object) }),
    });
    await consumer.start();
    const until = Date.now() + 60_000;
    while (seen.size < 3 && Date.now() < until) await new Promise((res) => setTimeout(res, 200));
    await consumer.stop();
    expect(ids.map((id) => seen.get(id))).toEqual(good.map((g) => ({ note: null, ...g })));

    // A Java consumer with Apicurio's Avro deserializer reads the same records.
    const java = await run(
      'java',
      ['-cp', `${registry.serdeLibDir}/*:${javaClasses}`, 'ReadAvroRecords', bed.stack.brokers.join(','), topic, registry.apicurioUrl, '3', '60000'],
      {
        timeoutMs: 120_000,
      },
    );
    expect(java.code, java.output).toBe(0);
    const lines = java.output.split('\n').filter((l) => /^[0-9a-f-]{36}\t/.test(l));
    expect(lines.map((l) => l.split('\t')[0])).toEqual(ids);
    expect(lines[1]).toContain('"orderId": "o-2"');
    expect(lines[1]).toContain('"note": "gift"');
  }, 300_000);

  it('with --on-malformed fail halts on a payload that breaks the schema, naming it, and never confirms past it', async () => {
    const type = uniqueName('avro');
    const topic = `outbox.event.${type}`;
    await registerOrderSchema(type);
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const witness = `${slot}_w`;
    await createSlot(bed.db.url, witness);
    const collector = await bed.collect([topic]);
    const r = bed.relay(slot, { env: avroEnv() });
    await r.waitForLog(isStreaming);
    await insert(type, 'before', { orderId: 'o-1', amount: 1 });
    await collector.waitForDistinct(1);
    const badId = await insert(type, 'bad', { orderId: 'o-2' });
    await insert(type, 'after', { orderId: 'o-3', amount: 3 });
    expect((await r.exited).code).toBe(5);
    expect(r.stderr()).toContain(`MALFORMED_ROW: outbox event id=${badId} does not fit schema id`);
    expect(r.stderr()).toContain('--on-malformed=dead-letter');
    const badTxn = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('bad'));
    expect(badTxn).toBeDefined();
    expect(await confirmedFlushLsn(bed.db.url, slot)).toBeLessThanOrEqual(badTxn!.commitLsn);
    expect(collector.records.map((x) => x.key)).toEqual(['before']);
  }, 180_000);

  /** Registry killed, rows written, the relay started: what it published and confirmed while the registry was down. */
  async function whileRegistryDown(variant?: 'encode-json-when-registry-down') {
    const type = uniqueName('avro');
    const topic = `outbox.event.${type}`;
    await registerOrderSchema(type);
    const slot = uniqueName('s');
    await createSlot(bed.db.url, slot);
    const witness = `${slot}_w`;
    await createSlot(bed.db.url, witness);
    const collector = await bed.collect([topic]);
    await registry.stop();
    const r = bed.relay(slot, { env: avroEnv({ OUTBOX_TAIL_RESTART_BACKOFF_MAX_MS: '2000' }), ...(variant ? { variant } : {}) });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await insert(type, `k${i}`, { orderId: `o-${i}`, amount: i }));
    // The correct relay fails its session at least twice (retried); the broken one never does: wait for either.
    const failures = () => r.logs.filter((l) => l.code === 'SCHEMA_REGISTRY_UNREACHABLE').length;
    const until = Date.now() + 60_000;
    while (failures() < 2 && collector.records.length < 5 && Date.now() < until) await new Promise((res) => setTimeout(res, 250));
    const first = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('k0'))!;
    const last = (await peekTransactions(bed.db.url, witness)).find((t) => t.aggregateIds.includes('k4'))!;
    return { r, slot, subject: `${topic}-value`, collector, ids, first, last, failures: failures(), publishedWhileDown: collector.records.length };
  }

  it('registry down: the relay retries, publishes nothing and confirms nothing past the events; once it is back everything is delivered and confirmed', async () => {
    try {
      const down = await whileRegistryDown();
      expect(down.failures).toBeGreaterThanOrEqual(2);
      expect(down.publishedWhileDown).toBe(0);
      expect(await confirmedFlushLsn(bed.db.url, down.slot)).toBeLessThanOrEqual(down.first.commitLsn);
      const failure = down.r.logs.find((l) => l.code === 'SCHEMA_REGISTRY_UNREACHABLE')!;
      expect(String(failure.err)).toContain(`schema registry ${registry.url} is unreachable`);

      await registry.start();
      // The registered schema survived the registry's stop (else the relay would rightly wait for it forever).
      expect((await new RegistryClient({ url: registry.url }).latest(down.subject)).type).toBe('AVRO');
      await down.collector.waitForDistinct(5, 120_000);
      expect([...new Set(down.collector.records.map((x) => x.headers.id))].sort()).toEqual([...down.ids].sort());
      const until = Date.now() + 30_000;
      while ((await confirmedFlushLsn(bed.db.url, down.slot)) < down.last.endLsn && Date.now() < until) await new Promise((res) => setTimeout(res, 250));
      expect(await confirmedFlushLsn(bed.db.url, down.slot)).toBeGreaterThanOrEqual(down.last.endLsn);
    } finally {
      if (
        !(await fetch(`${registry.url}/subjects`).then(
          (x) => x.ok,
          () => false,
        ))
      )
        await registry.start();
    }
  }, 300_000);

  it('negative control: a relay that publishes the JSON when the registry is down is caught by the same checks', async () => {
    try {
      const down = await whileRegistryDown('encode-json-when-registry-down');
      // Caught: it publishes values that are not in the wire format, and confirms past them, while the registry is down.
      expect(down.publishedWhileDown).toBeGreaterThan(0);
      expect(down.collector.records.some((x) => x.value![0] !== 0)).toBe(true);
    } finally {
      if (
        !(await fetch(`${registry.url}/subjects`).then(
          (x) => x.ok,
          () => false,
        ))
      )
        await registry.start();
    }
  }, 300_000);
});
