import type * as OtelApi from '@opentelemetry/api';

/**
 * W3C Trace Context and Baggage in an outbox event's headers, written and
 * read here rather than through the application's registered propagator: the
 * headers are always `traceparent`, `tracestate` and `baggage`, whatever
 * propagator (or none) the writing application configured, so the relay and
 * every consumer can read them.
 *
 * `@opentelemetry/api` is loaded only when something has registered an
 * OpenTelemetry global (an SDK, a context manager): without one there cannot
 * be an active span, and an application that does not use OpenTelemetry does
 * not pay for loading it.
 */
export type OtelApiModule = typeof OtelApi;

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';
export const BAGGAGE = 'baggage';

/** Where @opentelemetry/api 1.x keeps its globals (its GLOBAL_OPENTELEMETRY_API_KEY). */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

let loading: Promise<OtelApiModule> | null = null;

/** The API module when an OpenTelemetry global is registered in this process; null (and nothing loaded) otherwise. */
export function otelApiIfRegistered(): Promise<OtelApiModule> | null {
  if ((globalThis as Record<symbol, unknown>)[API_GLOBAL] === undefined) return null;
  loading ??= import('@opentelemetry/api');
  return loading;
}

const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The headers of the context's span and baggage; empty when the context holds neither. */
export function traceHeadersOf(api: OtelApiModule, ctx: OtelApi.Context): Record<string, string> {
  const out: Record<string, string> = {};
  const span = api.trace.getSpanContext(ctx);
  if (span && api.isSpanContextValid(span)) {
    out[TRACEPARENT] = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    const state = span.traceState?.serialize();
    if (state) out[TRACESTATE] = state;
  }
  const baggage = api.propagation.getBaggage(ctx);
  if (baggage) {
    const entries = baggage
      .getAllEntries()
      .map(([k, e]) => `${encodeURIComponent(k)}=${encodeURIComponent(e.value)}${e.metadata ? `;${e.metadata.toString()}` : ''}`);
    if (entries.length > 0) out[BAGGAGE] = entries.join(',');
  }
  return out;
}

/**
 * The remote parent a record's headers name, as a context (root when there is
 * no valid traceparent), with its baggage. Version 00 only: a later version's
 * traceparent is read by its first fields, as the W3C spec asks.
 */
export function contextFromHeaders(api: OtelApiModule, headers: Readonly<Record<string, string | undefined>>): OtelApi.Context {
  let ctx = api.ROOT_CONTEXT;
  const parent = parseTraceparent(headers[TRACEPARENT]);
  if (parent) {
    const state = headers[TRACESTATE];
    ctx = api.trace.setSpanContext(ctx, {
      ...parent,
      isRemote: true,
      ...(state ? { traceState: api.createTraceState(state) } : {}),
    });
  }
  const baggage = headers[BAGGAGE];
  if (baggage) {
    const entries: Record<string, OtelApi.BaggageEntry> = {};
    for (const item of baggage.split(',')) {
      const [pair = '', ...meta] = item.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      try {
        entries[decodeURIComponent(pair.slice(0, eq).trim())] = {
          value: decodeURIComponent(pair.slice(eq + 1).trim()),
          ...(meta.length > 0 ? { metadata: api.baggageEntryMetadataFromString(meta.join(';')) } : {}),
        };
      } catch {
        // A malformed percent-escape: skip that entry, keep the rest (W3C Baggage: be lenient on read).
      }
    }
    if (Object.keys(entries).length > 0) ctx = api.propagation.setBaggage(ctx, api.propagation.createBaggage(entries));
  }
  return ctx;
}

/** traceId, spanId and flags of a W3C traceparent; null when it is absent or invalid (all-zero ids, version ff). */
export function parseTraceparent(text: string | undefined): { traceId: string; spanId: string; traceFlags: number } | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  const version = trimmed.slice(0, 2);
  if (version === 'ff' || !/^[0-9a-f]{2}$/.test(version)) return null;
  let head = trimmed;
  if (version !== '00') {
    // A later version may append fields after the four of version 00: read those four (W3C Trace Context, "versioning").
    if (trimmed.length > 55 && trimmed[55] !== '-') return null;
    head = `00${trimmed.slice(2, 55)}`;
  }
  const m = TRACEPARENT_RE.exec(head);
  if (!m) return null;
  const [, traceId = '', spanId = '', flags = '00'] = m;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}
