/**
 * What OpenTelemetry tracing costs per event when it is on (docs/tracing.md#cost):
 * the relay's tracing sink (one producer span per record: start, attributes,
 * end, and the export to a real OTLP/HTTP endpoint through the
 * BatchSpanProcessor) against the same records sent untraced, the per-batch
 * alternative (one span per send, each record a link), and the writer's side
 * (trace headers read from the active context). In process, no Kafka: only
 * the added CPU, which is what tracing adds to the relay's work per record.
 *
 *   node --import tsx dev/bench/tracing-cost.ts [events]
 *
 * npm run bench runs it as the `tracing` scenario.
 */
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import type { Sink } from '../../src/sink/sink.js';
import { parseTraceparent, traceHeadersOf } from '../../src/observability/tracing/trace-context.js';
import { tracingDecorator } from '../../src/observability/tracing/tracing-decorator.js';
import { decorateSink } from '../../src/sink/sink-decorator.js';
import { fakeSink } from '../../test/support/fake-sinks.js';

export interface TracingCostResult {
  events: number;
  batch_size: number;
  /** CPU microseconds per event: untraced send, per-record spans, per-batch span with links. */
  untraced_us_per_event: number;
  per_record_us_per_event: number;
  per_batch_us_per_event: number;
  /** The added cost of per-record spans (their export included). */
  per_record_added_us_per_event: number;
  spans_exported: number;
  /** writeOutboxEvent's trace headers from the active context, per call. */
  writer_headers_us: number;
}

const BATCH = 500;
/** A batch every 10 ms: 50,000 events/s, about what one relay publishes at its best (docs/performance.md). */
const PACE_MS = 10;

/** A sink that acknowledges at once and counts what it was given. */
function countingSink(): Sink & { readonly count: () => number } {
  let records = 0;
  return Object.assign(fakeSink({ send: async (batch) => void (records += batch.length) }), { count: () => records });
}

function records(events: number): SinkRecord[][] {
  const batches: SinkRecord[][] = [];
  for (let i = 0; i < events; i += BATCH) {
    const batch: SinkRecord[] = [];
    for (let j = i; j < Math.min(events, i + BATCH); j++) {
      const value = Buffer.from(`{"order":${j},"amount":1200}`);
      batch.push({
        topic: 'outbox.event.order',
        key: `order-${j % 1000}`,
        value,
        headers: { id: `id-${j}`, event_type: 'OrderCreated', traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` },
        bytes: 200,
      });
    }
    batches.push(batch);
  }
  return batches;
}

/** An OTLP/HTTP endpoint that reads and drops every request, counting the bytes. */
async function otlpSink(): Promise<{ server: Server; url: string; bytes: () => number }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (d: Buffer) => (bytes += d.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/v1/traces`, bytes: () => bytes };
}

async function cpuUs(work: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await work();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

export async function tracingCost(log: (line: string) => void, events = 100_000): Promise<TracingCostResult> {
  const endpoint = await otlpSink();
  let exported = 0;
  const exporter = new OTLPTraceExporter({ url: endpoint.url });
  const counting = {
    export: (spans: Parameters<OTLPTraceExporter['export']>[0], done: Parameters<OTLPTraceExporter['export']>[1]) => {
      exported += spans.length;
      exporter.export(spans, done);
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  // The relay's defaults (queue 2048, 512 spans an export); sends paced at PACE_MS as Kafka's answers pace
  // the relay, so exports keep up: spans_exported says whether any were dropped.
  const provider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: counting })] });
  const tracer = provider.getTracer('bench');
  const batches = records(events);
  const run = async (sink: Sink) => {
    for (const batch of batches) {
      await sink.send(batch);
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
  };
  // Warm up every path once, then measure each.
  await run(countingSink());
  await run(decorateSink(countingSink(), tracingDecorator(api, tracer)));
  await provider.forceFlush();
  exported = 0;

  const untraced = await cpuUs(() => run(countingSink()));
  const perRecord = await cpuUs(async () => {
    await run(decorateSink(countingSink(), tracingDecorator(api, tracer)));
    await provider.forceFlush();
  });
  const spansPerRecord = exported;
  // The alternative: one span per send, the records' writer spans as links (a span has one parent).
  const perBatchSink = countingSink();
  const perBatch = await cpuUs(async () => {
    for (const batch of batches) {
      const links = batch.flatMap((r) => {
        const p = parseTraceparent(r.headers.traceparent);
        return p ? [{ context: { ...p, isRemote: true } }] : [];
      });
      const span = tracer.startSpan('send outbox.event.order', {
        kind: api.SpanKind.PRODUCER,
        links,
        attributes: { 'messaging.batch.message_count': batch.length },
      });
      await perBatchSink.send(batch);
      span.end();
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
    await provider.forceFlush();
  });
  await provider.shutdown();
  await new Promise((resolve) => endpoint.server.close(resolve));

  // The writer: headers from an active span, as writeOutboxEvent builds them per event.
  const cm = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(cm);
  const writerProvider = new TracerProvider();
  const span = writerProvider.getTracer('bench').startSpan('write');
  const ctx = api.trace.setSpan(api.ROOT_CONTEXT, span);
  const calls = 200_000;
  let sink = 0;
  const writer = await cpuUs(async () => {
    for (let i = 0; i < calls; i++) sink += Object.keys(traceHeadersOf(api, ctx)).length;
  });
  span.end();
  api.context.disable();
  if (sink === 0) throw new Error('writer headers missing');

  const us = (total: number) => Math.round((total / events) * 100) / 100;
  const result: TracingCostResult = {
    events,
    batch_size: BATCH,
    untraced_us_per_event: us(untraced),
    per_record_us_per_event: us(perRecord),
    per_batch_us_per_event: us(perBatch),
    per_record_added_us_per_event: us(perRecord - untraced),
    spans_exported: spansPerRecord,
    writer_headers_us: Math.round((writer / calls) * 100) / 100,
  };
  log(
    `  tracing (CPU per event, ${events} events in batches of ${BATCH}, OTLP/HTTP export included): untraced ${result.untraced_us_per_event} us, ` +
      `a span per record ${result.per_record_us_per_event} us (+${result.per_record_added_us_per_event} us, ${spansPerRecord} spans, ${Math.round(endpoint.bytes() / 1024)} KiB exported in all), ` +
      `a span per batch with links ${result.per_batch_us_per_event} us; writer's headers ${result.writer_headers_us} us per event`,
  );
  return result;
}

if (process.argv[1]?.endsWith('tracing-cost.ts')) {
  const result = await tracingCost((line) => console.log(line), Number(process.argv[2] ?? 100_000));
  console.log(JSON.stringify({ event: 'tracing-cost', ...result }));
}
