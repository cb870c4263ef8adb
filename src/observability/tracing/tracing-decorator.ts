import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { SinkRecord } from '../../sink/sink-record.js';
import type { SinkDecorator } from '../../sink/sink-decorator.js';
import { parseTraceparent, TRACEPARENT, TRACESTATE, type OtelApiModule } from './trace-context.js';

/**
 * The decorator that gives every record carrying a W3C traceparent one producer span,
 * a child of the writer's span, from the moment the relay hands it to the
 * producer until Kafka acknowledged it (exactly-once: until it is in the open
 * Kafka transaction, or for the last batch until the commit). One span per
 * record, not per batch: a batch holds records of many writers, and a span has
 * one parent. Records without a traceparent get none: a root span per untraced
 * event would be noise. The record and its headers are never changed: the
 * traceparent in Kafka is the writer's, as written.
 */
export function tracingDecorator(api: OtelApiModule, tracer: Tracer): SinkDecorator {
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT } = api;

  const start = (records: readonly SinkRecord[]): Span[] => {
    const spans: Span[] = [];
    for (const record of records) {
      const parent = parseTraceparent(record.headers[TRACEPARENT]);
      if (parent === null) continue;
      const state = record.headers[TRACESTATE];
      const ctx = api.trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true, ...(state ? { traceState: api.createTraceState(state) } : {}) });
      const attributes: Attributes = {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'messaging.destination.name': record.topic,
        'messaging.kafka.message.key': record.key,
        'messaging.message.body.size': record.value.length,
      };
      const id = record.headers.id;
      if (id !== undefined) attributes['messaging.message.id'] = id;
      spans.push(tracer.startSpan(`send ${record.topic}`, { kind: SpanKind.PRODUCER, attributes }, ctx));
    }
    return spans;
  };
  const end = (spans: Span[], error: unknown): void => {
    for (const span of spans) {
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message ?? String(error) });
        span.setAttribute('error.type', (error as { code?: string }).code ?? (error as Error).name ?? 'Error');
      }
      span.end();
    }
  };
  const traced = async <T>(records: readonly SinkRecord[], work: () => Promise<T>): Promise<T> => {
    const spans = start(records);
    if (spans.length === 0) return work();
    try {
      const value = await work();
      end(spans, undefined);
      return value;
    } catch (error) {
      end(spans, error ?? new Error('rejected'));
      throw error;
    }
  };

  return {
    send: (records, next) => traced(records, next),
    commit: (records, _position, next) => traced(records, next),
    // The last batch is acknowledged when seal() resolves; EndTxn's outcome is the caller's (a failed commit replays).
    seal: (records, _position, next) => traced(records, next),
  };
}
