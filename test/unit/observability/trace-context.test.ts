import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeOutboxEvent } from '../../../src/consumer/write-outbox-event.js';
import type { SinkRecord } from '../../../src/sink/sink-record.js';
import { contextFromHeaders, otelApiIfRegistered, parseTraceparent, traceHeadersOf } from '../../../src/observability/tracing/trace-context.js';
import { tracingRequested } from '../../../src/observability/tracing/relay-tracing.js';
import { tracingDecorator } from '../../../src/observability/tracing/tracing-decorator.js';
import { decorateSink } from '../../../src/sink/sink-decorator.js';
import { fakeSink } from '../../support/fake-sinks.js';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** A Queryable that records the statements instead of running them. */
function recorder() {
  const calls: Array<{ sql: string; values: unknown[] }> = [];
  return { calls, query: async (sql: string, values: unknown[]) => void calls.push({ sql, values }) };
}

// First, before any OpenTelemetry global exists in this file's process: nothing is loaded, nothing written.
describe('without OpenTelemetry in the process', () => {
  it('loads no API and writes no trace headers', async () => {
    expect(otelApiIfRegistered()).toBeNull();
    const tx = recorder();
    await writeOutboxEvent(tx as never, { aggregateType: 'order', aggregateId: '1', eventType: 'E', payload: {}, id: 'a' });
    expect(tx.calls[0]!.sql).not.toContain('headers');
  });
});

describe('trace context in headers', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  beforeAll(() => {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.trace.setGlobalTracerProvider(provider);
  });
  afterAll(() => {
    api.trace.disable();
    api.context.disable();
  });

  it('writeOutboxEvent writes traceparent, tracestate and baggage of the active span, and a header the caller gave wins', async () => {
    const tx = recorder();
    const baggage = api.propagation.createBaggage({ tenant: { value: 'acme corp' }, 'a,b': { value: 'x=y' } });
    const span = provider.getTracer('t').startSpan('write');
    const sc = span.spanContext();
    const ctx = api.trace.setSpan(api.propagation.setBaggage(api.ROOT_CONTEXT, baggage), span);
    const traced = api.trace.setSpanContext(ctx, { ...sc, traceState: api.createTraceState('vendor=x,other=y') });
    await api.context.with(traced, async () => {
      await writeOutboxEvent(tx as never, { aggregateType: 'order', aggregateId: '1', eventType: 'E', payload: {}, id: 'a' });
      await writeOutboxEvent(tx as never, { aggregateType: 'order', aggregateId: '1', eventType: 'E', payload: {}, id: 'b', headers: { tracestate: 'mine' } });
    });
    span.end();
    const first = JSON.parse(tx.calls[0]!.values[5] as string) as Record<string, string>;
    expect(first).toEqual({ traceparent: `00-${sc.traceId}-${sc.spanId}-01`, tracestate: 'vendor=x,other=y', baggage: 'tenant=acme%20corp,a%2Cb=x%3Dy' });
    expect(JSON.parse(tx.calls[1]!.values[5] as string)).toMatchObject({ tracestate: 'mine' });
    // What was written reads back as the same span context and baggage.
    const back = contextFromHeaders(api, first);
    expect(api.trace.getSpanContext(back)).toMatchObject({ traceId: sc.traceId, spanId: sc.spanId, traceFlags: 1, isRemote: true });
    expect(api.propagation.getBaggage(back)?.getEntry('a,b')?.value).toBe('x=y');
  });

  it('writes nothing outside a span, and leaves headers that are not an object to the validation', async () => {
    const tx = recorder();
    await writeOutboxEvent(tx as never, { aggregateType: 'order', aggregateId: '1', eventType: 'E', payload: {}, id: 'a' });
    expect(tx.calls[0]!.sql).not.toContain('headers');
    const span = provider.getTracer('t').startSpan('write');
    await expect(
      api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), () =>
        writeOutboxEvent(tx as never, { aggregateType: 'o', aggregateId: '1', eventType: 'E', payload: {}, headers: null as never }),
      ),
    ).rejects.toThrow(/headers must be an object/);
    span.end();
  });

  it('parses W3C traceparents and refuses invalid ones', () => {
    expect(parseTraceparent(TP)).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });
    expect(parseTraceparent(`01${TP.slice(2)}-future`)).toMatchObject({ spanId: '00f067aa0ba902b7' });
    for (const bad of [
      undefined,
      '',
      'garbage',
      `ff${TP.slice(2)}`,
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      `${TP}-extra`,
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
  });

  it('the tracing sink gives each traced record a producer span, child of its writer span, with messaging attributes; untraced records none', async () => {
    exporter.reset();
    const sent: SinkRecord[] = [];
    let fail = false;
    const inner = fakeSink({
      send: async (records) => {
        if (fail) throw Object.assign(new Error('broker down'), { code: 'KAFKA_ERROR' });
        sent.push(...records);
      },
    });
    const sink = decorateSink(inner, tracingDecorator(api, provider.getTracer('relay')));
    const record = (id: string, headers: Record<string, string>): SinkRecord => ({
      topic: 'outbox.event.order',
      key: 'k',
      value: Buffer.from('{}'),
      headers: { id, ...headers },
      bytes: 10,
    });
    await sink.send([record('a', { traceparent: TP }), record('b', {})]);
    expect(sent.map((r) => r.headers)).toEqual([{ id: 'a', traceparent: TP }, { id: 'b' }]);
    const [span, ...more] = exporter.getFinishedSpans();
    expect(more).toEqual([]);
    expect(span!.kind).toBe(api.SpanKind.PRODUCER);
    expect(span!.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(span!.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'outbox.event.order',
      'messaging.message.id': 'a',
    });
    fail = true;
    await expect(sink.send([record('c', { traceparent: TP })])).rejects.toThrow('broker down');
    expect(exporter.getFinishedSpans()[1]!.status).toMatchObject({ code: api.SpanStatusCode.ERROR, message: 'broker down' });
  });

  it('turns the relay tracing on only for the OTEL_* variables that ask for it', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });

  it('traceHeadersOf is empty for a context without span or baggage', () => {
    expect(traceHeadersOf(api, api.ROOT_CONTEXT)).toEqual({});
  });
});
