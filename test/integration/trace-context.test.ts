import { context, propagation, trace, SpanKind, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayStages } from '../../src/commands/run/relay-wiring.js';
import { resolveConfig } from '../../src/config/resolve-config.js';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { Relay } from '../../src/relay/relay.js';
import { createKafkaSink } from '../../src/sink/create-sink.js';
import { tracingDecorator } from '../../src/observability/tracing/tracing-decorator.js';
import { decorateSink } from '../../src/sink/sink-decorator.js';
import * as api from '@opentelemetry/api';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { kafkaFor, readTopic } from '../support/kafka.js';
import { createSlot } from '../support/slot.js';
import { getStack } from '../support/stack.js';

// Writer -> relay -> idempotent consumer against the real PostgreSQL and Kafka, every span
// in the OpenTelemetry SDK's in-memory exporter: one process plays the application (the
// global provider, as an app registers it) and runs the relay in-process with its tracing sink.
const stack = getStack();
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let db: TestDatabase;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  db = await createTestDatabase(stack);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  await db?.drop();
});

const hex = (s: ReadableSpan) => ({ traceId: s.spanContext().traceId, spanId: s.spanContext().spanId, parent: s.parentSpanContext?.spanId });

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('trace context from writer through relay to consumer (real PostgreSQL and Kafka, in-memory exporter)', () => {
  it('gives the relay producer span and the consumer process span the writer span as parent, in one trace, and publishes traceparent unchanged', async () => {
    const type = uniqueName('traced');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(db.url, slot);
    const admin = kafkaFor(stack).admin();
    await admin.connect();
    await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }]);
    await admin.disconnect();
    const config = resolveConfig({
      env: { OUTBOX_TAIL_DATABASE_URL: db.url, OUTBOX_TAIL_BROKERS: stack.brokers.join(','), OUTBOX_TAIL_SLOT: slot, OUTBOX_TAIL_SOURCE: 'both' },
    });
    const stages = relayStages({ ...config, slot });
    const tracer = provider.getTracer('relay-under-test');
    const relay = new Relay({
      ...stages,
      logger: pino({ level: 'silent' }),
      sinkFactory: (settings, logger) => decorateSink(createKafkaSink(settings, logger), tracingDecorator(api, tracer)),
    });
    const running = relay.run();
    try {
      // The writer: a business transaction inside the application's span, with baggage.
      const writerTracer = trace.getTracer('writer');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const baggage = propagation.createBaggage({ tenant: { value: 'acme corp' } });
      let writerSpan: Span | undefined;
      let emitted = '';
      const tracedId = await context.with(propagation.setBaggage(context.active(), baggage), () =>
        writerTracer.startActiveSpan('place order', async (span) => {
          writerSpan = span;
          await client.query('begin');
          const traced = await writeOutboxEvent(client, { aggregateType: type, aggregateId: 'o-1', eventType: 'OrderPlaced', payload: { n: 1 } });
          await client.query('commit');
          // From SQL: outbox_tail.emit() with the trace context as arguments (they win over the same keys in headers).
          const sc = span.spanContext();
          emitted = (
            await client.query<{ id: string }>('select outbox_tail.emit($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8)::text as id', [
              type,
              'o-3',
              'OrderPaid',
              '{"n": 3}',
              '{"traceparent": "overridden", "own": "kept"}',
              `00-${sc.traceId}-${sc.spanId}-01`,
              'vendor=x',
              null,
            ])
          ).rows[0]!.id;
          span.end();
          return traced;
        }),
      );
      // Outside any span: no trace headers, and the relay makes no span for it.
      await client.query('begin');
      const plainId = await writeOutboxEvent(client, { aggregateType: type, aggregateId: 'o-2', eventType: 'OrderPlaced', payload: { n: 2 } });
      await client.query('commit');
      await client.end();

      const records = await readTopic(stack, topic, 3);
      const byId = new Map(records.map((r) => [r.headers.id, r]));
      const w = writerSpan!.spanContext();
      expect(byId.get(tracedId)!.headers.traceparent).toBe(`00-${w.traceId}-${w.spanId}-01`);
      expect(byId.get(tracedId)!.headers.baggage).toBe('tenant=acme%20corp');
      expect(byId.get(plainId)!.headers.traceparent).toBeUndefined();
      expect(byId.get(emitted)!.headers).toMatchObject({ traceparent: `00-${w.traceId}-${w.spanId}-01`, tracestate: 'vendor=x', own: 'kept' });
      expect(byId.get(emitted)!.headers.baggage).toBeUndefined();

      // The consumer: its handler sees the process span as active and the writer's baggage.
      const seen: Array<{ id: string; active: string | undefined; tenant: string | undefined }> = [];
      const consumer = createIdempotentConsumer({
        brokers: stack.brokers,
        groupId: uniqueName('traced-group'),
        topics: [topic],
        database: db.url,
        handler: async (_tx, event) => {
          seen.push({ id: event.id, active: trace.getActiveSpan()?.spanContext().spanId, tenant: propagation.getActiveBaggage()?.getEntry('tenant')?.value });
        },
      });
      await consumer.start();
      try {
        await waitFor('the three events consumed', () => (seen.length >= 3 ? true : undefined));
      } finally {
        await consumer.stop();
      }

      const spans = exporter.getFinishedSpans();
      const writer = spans.find((s) => s.name === 'place order')!;
      const producers = spans.filter((s) => s.kind === SpanKind.PRODUCER);
      const consumers = spans.filter((s) => s.kind === SpanKind.CONSUMER);
      const producer = producers.find((s) => s.attributes['messaging.message.id'] === tracedId)!;
      const processSpan = consumers.find((s) => s.attributes['messaging.message.id'] === tracedId)!;
      expect(hex(producer)).toMatchObject({ traceId: hex(writer).traceId, parent: hex(writer).spanId });
      expect(hex(processSpan)).toMatchObject({ traceId: hex(writer).traceId, parent: hex(writer).spanId });
      const emittedProducer = producers.find((s) => s.attributes['messaging.message.id'] === emitted)!;
      expect(hex(emittedProducer)).toMatchObject({ traceId: hex(writer).traceId, parent: hex(writer).spanId });
      expect(producer.name).toBe(`send ${topic}`);
      expect(producer.attributes).toMatchObject({
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.destination.name': topic,
        'messaging.message.id': tracedId,
      });
      expect(processSpan.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': topic });
      // The untraced event: no producer span; its consumer span is a root of a trace of its own.
      expect(producers.some((s) => s.attributes['messaging.message.id'] === plainId)).toBe(false);
      const plainProcess = consumers.find((s) => s.attributes['messaging.message.id'] === plainId)!;
      expect(plainProcess.parentSpanContext).toBeUndefined();
      expect(plainProcess.spanContext().traceId).not.toBe(hex(writer).traceId);
      // The handler ran inside its process span, with the writer's baggage.
      expect(seen.find((s) => s.id === tracedId)).toEqual({ id: tracedId, active: hex(processSpan).spanId, tenant: 'acme corp' });
    } finally {
      relay.stop();
      await running;
    }
  });
});
