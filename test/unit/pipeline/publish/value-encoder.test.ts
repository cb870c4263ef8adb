import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Checkpointer } from '../../../../src/pipeline/checkpoint/checkpointer.js';
import { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import type { OutboxEvent, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { badRowPolicies } from '../../../../src/pipeline/publish/bad-row-policy.js';
import { AtLeastOncePublisher } from '../../../../src/pipeline/publish/at-least-once-publisher.js';
import type { PublishCounters } from '../../../../src/pipeline/publish/publish-queue.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import type { SinkRecord } from '../../../../src/sink/sink-record.js';
import { ValueEncoder, type ValueEncoderSettings, type ValueResult } from '../../../../src/pipeline/publish/record-format/value-encoder.js';
import type { RegisteredSchema } from '../../../../src/schema-registry/registry-client.js';
import { compileSchema } from '../../../../src/schema-registry/schema-codec.js';
import { ValueDecoder } from '../../../../src/schema-registry/value-decoder.js';
import { frame, unframe } from '../../../../src/schema-registry/wire-format.js';

const ORDER_AVRO = JSON.stringify({
  type: 'record',
  name: 'Order',
  namespace: 'shop',
  fields: [
    { name: 'orderId', type: 'string' },
    { name: 'amount', type: 'int' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
});
const ORDER_JSON_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { orderId: { type: 'string' }, amount: { type: 'integer' } },
  required: ['orderId', 'amount'],
});

let seq = 0;
const txn = (): Transaction => ({ seq: ++seq, xid: seq, commitLsn: Lsn.of(BigInt(seq * 100)), commitTime: 0n, endLsn: null });
const outboxEvent = (t: Transaction, id: string, payload: unknown, aggregateType = 'order'): OutboxEvent => ({
  id,
  aggregateType,
  aggregateId: `k-${id}`,
  eventType: 'OrderCreated',
  payload: Buffer.from(JSON.stringify(payload)),
  headers: {},
  createdAt: null,
  table: 'public.outbox',
  txn: t,
});

/** A registry stand-in for the pure tests: latest() answers from a map and counts its calls (the integration test uses a real registry). */
function fakeRegistry(subjects: Record<string, RegisteredSchema>) {
  const calls: string[] = [];
  return {
    calls,
    subjects,
    down: false,
    async latest(subject: string): Promise<RegisteredSchema> {
      calls.push(subject);
      if (this.down) throw new OutboxTailError('SCHEMA_REGISTRY_UNREACHABLE', 'schema registry http://127.0.0.1:1 is unreachable', { retriable: true });
      const found = this.subjects[subject];
      if (!found) throw new OutboxTailError('SCHEMA_NOT_FOUND', `no subject ${subject}`, { retriable: true });
      return found;
    },
  };
}

const settings = (over: Partial<ValueEncoderSettings> = {}): ValueEncoderSettings => ({
  valueFormat: 'avro',
  subjectTemplate: '{topic}-value',
  refreshMs: 60_000,
  registry: { url: 'http://127.0.0.1:1' },
  ...over,
});

const record = (e: OutboxEvent): SinkRecord => new RecordBuilder('outbox.event.{aggregate_type}').build(e);

describe('Confluent wire format', () => {
  it('frames a body as magic byte 0 + the 4-byte big-endian schema id, and reads it back', () => {
    const framed = frame(258, Buffer.from('body'));
    expect([...framed.subarray(0, 5)]).toEqual([0, 0, 0, 1, 2]);
    expect(unframe(framed)).toEqual({ schemaId: 258, body: Buffer.from('body') });
  });

  it('does not take a JSON value (or anything without the magic byte) for a framed one', () => {
    expect(unframe(Buffer.from('{"a":1}'))).toBeNull();
    expect(unframe(Buffer.from([0, 0, 1]))).toBeNull();
  });
});

describe('schema codecs', () => {
  it('Avro: a fitting jsonb payload encodes to Avro binary and decodes back to the same values (optional union left out = its default)', () => {
    const codec = compileSchema('AVRO', ORDER_AVRO);
    const result = codec.encode(Buffer.from('{"orderId":"o-1","amount":42}'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.body.length).toBeLessThan('{"orderId":"o-1","amount":42}'.length);
    expect({ ...(codec.decode(result.body) as object) }).toEqual({ orderId: 'o-1', amount: 42, note: null });
  });

  it('Avro: a payload missing a required field or of the wrong type is refused with the field named', () => {
    const codec = compileSchema('AVRO', ORDER_AVRO);
    const missing = codec.encode(Buffer.from('{"orderId":"o-1"}'));
    expect(missing).toMatchObject({ ok: false, reason: expect.stringContaining('amount') });
    const wrongType = codec.encode(Buffer.from('{"orderId":"o-1","amount":"many"}'));
    expect(wrongType).toMatchObject({ ok: false, reason: expect.stringContaining('amount') });
    expect(codec.encode(Buffer.from('not json'))).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
  });

  it('JSON Schema: a fitting payload keeps its own bytes as the body; one that breaks the schema is refused', () => {
    const codec = compileSchema('JSON', ORDER_JSON_SCHEMA);
    const payload = Buffer.from('{"orderId":"o-1","amount":42}');
    expect(codec.encode(payload)).toEqual({ ok: true, body: payload });
    expect(codec.encode(Buffer.from('{"orderId":"o-1"}'))).toMatchObject({ ok: false, reason: expect.stringContaining('amount') });
  });
});

describe('ValueEncoder', () => {
  it("looks a subject's latest schema up once, then encodes synchronously from the cache until --schema-registry-refresh-ms", async () => {
    let now = 1_000;
    const registry = fakeRegistry({ 'outbox.event.order-value': { id: 7, type: 'AVRO', schema: ORDER_AVRO } });
    const encoder = new ValueEncoder(settings({ refreshMs: 10_000 }), registry, () => now);
    const e = outboxEvent(txn(), 'a', { orderId: 'o-1', amount: 1 });
    expect(encoder.tryEncode(record(e), e)).toBeUndefined();
    const first = await encoder.encode(record(e), e);
    expect(first.ok && unframe(first.value)?.schemaId).toBe(7);
    for (let i = 0; i < 5; i++) expect(encoder.tryEncode(record(e), e)?.ok).toBe(true);
    expect(registry.calls).toEqual(['outbox.event.order-value']);
    now += 10_000;
    expect(encoder.tryEncode(record(e), e)).toBeUndefined();
  });

  it('looks the latest schema up again before calling a payload bad, so a writer ahead of the cache is encoded with the new version', async () => {
    let now = 1_000;
    const registry = fakeRegistry({ 'outbox.event.order-value': { id: 1, type: 'AVRO', schema: ORDER_AVRO } });
    const encoder = new ValueEncoder(settings(), registry, () => now);
    const ok = outboxEvent(txn(), 'a', { orderId: 'o-1', amount: 1 });
    await encoder.encode(record(ok), ok);
    const v2 = JSON.parse(ORDER_AVRO) as { fields: unknown[] };
    v2.fields.push({ name: 'currency', type: 'string' });
    registry.subjects['outbox.event.order-value'] = { id: 2, type: 'AVRO', schema: JSON.stringify(v2) };
    const newer = outboxEvent(txn(), 'b', { orderId: 'o-2', amount: 2, currency: 'EUR' });
    const onlyV2 = outboxEvent(txn(), 'c', { orderId: 'o-3', amount: 'x' });
    now += 6_000;
    expect(encoder.tryEncode(record(onlyV2), onlyV2)).toBeUndefined(); // a mismatch on a schema older than 5 s: ask again
    // v2 refuses it too: now it is bad, with v2's id.
    const result: ValueResult = await encoder.encode(record(onlyV2), onlyV2);
    expect(result).toMatchObject({ ok: false, schemaId: 2, subject: 'outbox.event.order-value' });
    expect(encoder.tryEncode(record(onlyV2), onlyV2)).toMatchObject({ ok: false }); // fresh: no second lookup
    const encoded = encoder.tryEncode(record(newer), newer);
    expect(encoded?.ok && unframe(encoded.value)?.schemaId).toBe(2);
  });

  it('renders the subject template per record ({aggregate_type}, {event_type}, {table}, {topic})', async () => {
    const registry = fakeRegistry({ 'shop.order.OrderCreated.public.outbox.outbox.event.order': { id: 3, type: 'AVRO', schema: ORDER_AVRO } });
    const encoder = new ValueEncoder(settings({ subjectTemplate: 'shop.{aggregate_type}.{event_type}.{table}.{topic}' }), registry);
    const e = outboxEvent(txn(), 'a', { orderId: 'o', amount: 1 });
    expect((await encoder.encode(record(e), e)).ok).toBe(true);
  });

  it('refuses a subject whose schema type is not the one --value-format names', async () => {
    const registry = fakeRegistry({ 'outbox.event.order-value': { id: 3, type: 'JSON', schema: ORDER_JSON_SCHEMA } });
    const encoder = new ValueEncoder(settings(), registry);
    const e = outboxEvent(txn(), 'a', { orderId: 'o', amount: 1 });
    await expect(encoder.encode(record(e), e)).rejects.toMatchObject({ code: 'SCHEMA_NOT_FOUND', message: expect.stringContaining('--value-format is avro') });
  });
});

describe('ValueDecoder', () => {
  it('decodes framed values with the schema their id names, fetched once per id; a value of an unknown id or not framed is refused', async () => {
    const calls: number[] = [];
    const decoder = new ValueDecoder(
      { url: 'http://127.0.0.1:1' },
      {
        byId: async (id: number) => {
          calls.push(id);
          if (id !== 9) throw new OutboxTailError('SCHEMA_NOT_FOUND', `no schema id ${id}`, { retriable: true });
          return { id, type: 'AVRO' as const, schema: ORDER_AVRO };
        },
      },
    );
    const body = compileSchema('AVRO', ORDER_AVRO).encode(Buffer.from('{"orderId":"o","amount":5}'));
    if (!body.ok) throw new Error('fixture');
    const value = frame(9, body.body);
    await decoder.prepare([value, value, frame(10, body.body), Buffer.from('{}'), null]);
    expect(calls).toEqual([9, 10]);
    expect({ ...(decoder.decode(value) as object) }).toEqual({ orderId: 'o', amount: 5, note: null });
    expect(() => decoder.decode(frame(10, body.body))).toThrow(/schema id 10/);
    expect(() => decoder.decode(Buffer.from('{}'))).toThrow(/wire format/);
  });
});

/** A publishing stage with --value-format avro over a recording sink and the ack frontier. */
function bed(registry: ReturnType<typeof fakeRegistry>, onMalformed: 'fail' | 'dead-letter', encoder?: ValueEncoder) {
  const checkpointer = new Checkpointer();
  const sent: SinkRecord[] = [];
  const counters: PublishCounters = {
    eventsReceived: 0,
    recordsPublished: 0,
    deadLettered: 0,
    batches: 0,
    kafkaTransactions: 0,
    kafkaTransactionsPgTransactions: 0,
    onPublished: null,
  };
  let confirms = 0;
  const stage = new AtLeastOncePublisher({
    sink: { send: async (records) => void sent.push(...records) },
    builder: new RecordBuilder('outbox.event.{aggregate_type}'),
    limits: { batchMaxMessages: 100, batchMaxBytes: 1_000_000, batchMaxWaitMs: 0, maxInFlightMessages: 1000, maxInFlightBytes: 1 << 24 },
    policies: badRowPolicies({ onOversize: 'fail', onMalformed, deadLetterTopic: 'dlq' }),
    flow: { pause() {}, resume() {}, isPaused: false },
    acks: checkpointer,
    confirm: async () => void confirms++,
    counters,
    logger: pino({ level: 'silent' }),
    valueEncoder: encoder ?? new ValueEncoder(settings(), registry),
  });
  const push = (t: Transaction, ...events: OutboxEvent[]) => {
    checkpointer.begin(t);
    for (const e of events) stage.enqueue({ kind: 'event', event: e });
    t.endLsn = Lsn.of(t.commitLsn + 10n);
    checkpointer.committed(t);
  };
  return { stage, checkpointer, sent, counters, push, confirms: () => confirms };
}

const schemas = () => fakeRegistry({ 'outbox.event.order-value': { id: 5, type: 'AVRO', schema: ORDER_AVRO } });

/** A broken variant: on a registry error it sends the JSON payload as it is (what "skip the encoding" would do). */
class PassThroughOnErrorEncoder extends ValueEncoder {
  override async encode(r: SinkRecord, e: OutboxEvent): Promise<ValueResult> {
    try {
      return await super.encode(r, e);
    } catch {
      return { ok: true, value: r.value };
    }
  }
}

async function runWhileRegistryDown(encoder?: (registry: ReturnType<typeof fakeRegistry>) => ValueEncoder) {
  const registry = schemas();
  registry.down = true;
  const b = bed(registry, 'dead-letter', encoder?.(registry));
  const t = txn();
  b.push(t, outboxEvent(t, 'a', { orderId: 'o-1', amount: 1 }));
  const running = b.stage.run().then(
    () => null,
    (e: unknown) => e,
  );
  await new Promise((r) => setTimeout(r, 20));
  b.stage.drain();
  const error = await running;
  return { error, sent: b.sent.length, safeLsn: b.checkpointer.safeLsn, txn: t };
}

describe('PublishingStage with --value-format avro', () => {
  it("sends every value in the wire format with its subject's latest schema id", async () => {
    const b = bed(schemas(), 'fail');
    const t = txn();
    b.push(t, outboxEvent(t, 'a', { orderId: 'o-1', amount: 1 }), outboxEvent(t, 'b', { orderId: 'o-2', amount: 2 }));
    const running = b.stage.run();
    await new Promise((r) => setTimeout(r, 20));
    b.stage.drain();
    await running;
    expect(b.sent.map((r) => unframe(r.value)?.schemaId)).toEqual([5, 5]);
    expect(b.checkpointer.safeLsn).toBe(t.endLsn);
  });

  it('dead-letters a payload that does not fit its schema under --on-malformed dead-letter, with the reason; the rest are published', async () => {
    const b = bed(schemas(), 'dead-letter');
    const t = txn();
    b.push(
      t,
      outboxEvent(t, 'a', { orderId: 'o-1', amount: 1 }),
      outboxEvent(t, 'bad', { orderId: 'o-2' }),
      outboxEvent(t, 'c', { orderId: 'o-3', amount: 3 }),
    );
    const running = b.stage.run();
    await new Promise((r) => setTimeout(r, 20));
    b.stage.drain();
    await running;
    expect(b.sent.map((r) => r.topic)).toEqual(['outbox.event.order', 'dlq', 'outbox.event.order']);
    expect(b.sent[1]!.headers).toMatchObject({ id: 'bad', reason: expect.stringContaining('schema: payload does not fit') });
    expect(b.counters).toMatchObject({ recordsPublished: 2, deadLettered: 1 });
    expect(b.checkpointer.safeLsn).toBe(t.endLsn);
  });

  it('halts on a payload that does not fit under --on-malformed fail: what comes before is published and confirmed, nothing at or after it', async () => {
    const b = bed(schemas(), 'fail');
    const [t1, t2] = [txn(), txn()];
    b.push(t1, outboxEvent(t1, 'a', { orderId: 'o-1', amount: 1 }));
    b.push(t2, outboxEvent(t2, 'bad', { orderId: 'o-2' }), outboxEvent(t2, 'after', { orderId: 'o-3', amount: 3 }));
    await expect(b.stage.run()).rejects.toMatchObject({ code: 'MALFORMED_ROW', message: expect.stringContaining('id=bad does not fit schema id 5') });
    expect(b.sent.map((r) => r.headers.id)).toEqual(['a']);
    expect(b.confirms()).toBe(1);
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
  });

  it('registry unreachable: the stage rejects with a retriable error, sends nothing and the frontier does not move (a pass-through encoder is caught)', async () => {
    const correct = await runWhileRegistryDown();
    expect(correct.error).toMatchObject({ code: 'SCHEMA_REGISTRY_UNREACHABLE', retriable: true });
    expect(correct.sent).toBe(0);
    expect(correct.safeLsn).toBeLessThan(correct.txn.endLsn!);

    // Negative control: the same test, on an encoder that sends the JSON on a registry error, sees a record sent.
    const broken = await runWhileRegistryDown((registry) => new PassThroughOnErrorEncoder(settings(), registry));
    expect(broken.sent).toBeGreaterThan(0);
  });
});
