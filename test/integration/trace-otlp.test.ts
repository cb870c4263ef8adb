import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { freePort } from '../../dev/stack/process.js';
import { uniqueName } from '../support/database.js';
import { OTELCOL_BUILD_WAIT_MS, otelcolReady, startOtelCollector, type CollectedSpan, type OtelCollector } from '../support/otel-collector.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, currentWalLsn, waitForConfirmed } from '../support/slot.js';

// The trace of one outbox event through a real OTLP receiver: the OpenTelemetry Collector's own, built from
// dev/otelcol (bin/setup-otelcol.sh), the real relay process configured through the standard OTEL_* variables,
// the writer and the idempotent consumer in this process exporting over OTLP too.
// And the relay with its collector down: it keeps relaying and confirming.
const bed = relayTestbed();

async function inTransaction<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } finally {
    await client.end();
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let otelcol: OtelCollector | undefined;
let app: TracerProvider | undefined;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  await app?.shutdown();
  trace.disable();
  context.disable();
  await otelcol?.stop();
});

describe('trace context through a real OTLP receiver (the OpenTelemetry Collector)', () => {
  it(
    'writer, relay and consumer spans reach the collector in one trace, the relay and consumer spans children of the writer span',
    async () => {
      // A missing binary fails here with the command that builds it (never a skip); a build running beside this
      // run (CI's, in the background) is waited for, hence this test's long timeout.
      otelcol = await startOtelCollector(await otelcolReady());
      // The application: its own service name, exporting to the same collector.
      app = new TracerProvider({
        resource: resourceFromAttributes({ 'service.name': 'order-app' }),
        spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${otelcol.otlpHttp}/v1/traces` }), scheduledDelayMillis: 200 })],
      });
      trace.setGlobalTracerProvider(app);

      const type = uniqueName('otlp');
      const topic = `outbox.event.${type}`;
      const slot = uniqueName('slot');
      await createSlot(bed.db.url, slot);
      await bed.collect([topic]);
      const relay = bed.relay(slot, {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: otelcol.otlpHttp, OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_SERVICE_NAME: 'outbox-tail' },
      });
      await relay.waitForLog(isStreaming);
      expect(relay.logs.some((l) => l.event === 'tracing-on')).toBe(true);

      const { id, traceId, writerSpanId } = await trace.getTracer('order-app').startActiveSpan('place order', async (span) => {
        const id = await inTransaction(bed.db.url, (c) =>
          writeOutboxEvent(c, { aggregateType: type, aggregateId: 'o-1', eventType: 'OrderPlaced', payload: { n: 1 } }),
        );
        span.end();
        return { id, traceId: span.spanContext().traceId, writerSpanId: span.spanContext().spanId };
      });

      let handled = false;
      const consumer = createIdempotentConsumer({
        brokers: bed.stack.brokers,
        groupId: uniqueName('otlp-group'),
        topics: [topic],
        database: bed.db.url,
        handler: async (_tx, event) => {
          if (event.id === id) handled = true;
        },
      });
      await consumer.start();
      try {
        await until('the event consumed', async () => (handled ? true : undefined));
      } finally {
        await consumer.stop();
      }
      await app.forceFlush();

      const spans = await until('writer, relay and consumer spans at the collector', async () => {
        const found = otelcol!.spans().filter((s) => s.traceId === traceId);
        return found.length >= 3 ? found : undefined;
      });
      const named = (service: string, name: string): CollectedSpan | undefined => spans.find((s) => s.service === service && s.name === name);
      const writer = named('order-app', 'place order');
      const producer = named('outbox-tail', `send ${topic}`);
      const processSpan = named('order-app', `process ${topic}`);
      expect({ writer: writer?.spanId, producerParent: producer?.parentSpanId, consumerParent: processSpan?.parentSpanId }).toEqual({
        writer: writerSpanId,
        producerParent: writerSpanId,
        consumerParent: writerSpanId,
      });
    },
    OTELCOL_BUILD_WAIT_MS + 120_000,
  );

  it('keeps relaying and confirming with the OTLP collector down, and logs the failed exports', async () => {
    // A writer with spans of its own (in memory): the relay has traced records to make spans of.
    const writerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })] });
    const tracer = writerProvider.getTracer('writer');
    const type = uniqueName('nocollector');
    const topic = `outbox.event.${type}`;
    const slot = uniqueName('slot');
    await createSlot(bed.db.url, slot);
    const collector = await bed.collect([topic]);
    const deadPort = await freePort();
    const relay = bed.relay(slot, {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${deadPort}`, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_EXPORTER_OTLP_TIMEOUT: '500' },
    });
    await relay.waitForLog(isStreaming);
    const n = 20;
    for (let i = 0; i < n; i++) {
      const span = tracer.startSpan(`write ${i}`);
      await context.with(trace.setSpan(context.active(), span), () =>
        inTransaction(bed.db.url, (c) => writeOutboxEvent(c, { aggregateType: type, aggregateId: `k-${i % 3}`, eventType: 'E', payload: { i } })),
      );
      span.end();
    }
    const written = await currentWalLsn(bed.db.url);
    await collector.waitForDistinct(n);
    // Confirmed past every write: the exporter's failures never held back a confirm.
    await waitForConfirmed(bed.db.url, slot, written);
    const failure = await relay.waitForLog((l) => l.event === 'tracing-error' || l.event === 'tracing-warning', 30_000);
    expect(failure.msg).toBeTruthy();
    expect(relay.child.exitCode).toBeNull();
    await writerProvider.shutdown();
  });
});
