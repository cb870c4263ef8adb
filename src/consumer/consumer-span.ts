import { contextFromHeaders, otelApiIfRegistered } from '../observability/tracing/trace-context.js';
import type { ConsumedEvent } from './consumed-event.js';

/**
 * Runs the handler for one event in an OpenTelemetry consumer span ("process
 * <topic>") whose parent is the record's `traceparent` (the writer's span), with
 * the record's baggage, so the handler's own spans and queries join the
 * writer's trace. Without an OpenTelemetry global in the process (no SDK
 * registered) the handler just runs and the API is never loaded.
 */
export async function inConsumerSpan<T>(event: ConsumedEvent<unknown>, groupId: string, run: () => Promise<T>): Promise<T> {
  const loading = otelApiIfRegistered();
  if (loading === null) return run();
  const api = await loading;
  const parent = contextFromHeaders(api, event.headers);
  const span = api.trace.getTracer('outbox-tail').startSpan(
    `process ${event.topic}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': event.topic,
        'messaging.destination.partition.id': String(event.partition),
        'messaging.kafka.offset': Number(event.offset),
        'messaging.message.id': event.id,
        'messaging.consumer.group.name': groupId,
        ...(event.key !== null ? { 'messaging.kafka.message.key': event.key } : {}),
      },
    },
    parent,
  );
  try {
    return await api.context.with(api.trace.setSpan(parent, span), run);
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}
