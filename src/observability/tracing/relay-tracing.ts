import type { Logger } from 'pino';
import type { RelayTracing } from './relay-tracer-provider.js';

/**
 * The relay's OpenTelemetry tracing, off unless the standard OTEL_* variables
 * ask for it (docs/tracing.md): OTEL_TRACES_EXPORTER (otlp or console), or an
 * OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
 * OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off. Unlike the
 * SDK's own default (otlp), nothing set means off: a relay upgraded in place
 * must not start exporting to localhost:4318.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  if (exporters.some((e) => e !== '')) return true;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the tracer provider the environment describes. The SDK and the
 * exporter are imported here, on demand, so a relay without tracing never
 * loads them.
 */
export async function startRelayTracing(env: NodeJS.ProcessEnv, logger: Logger): Promise<RelayTracing> {
  const { createRelayTracerProvider } = await import('./relay-tracer-provider.js');
  return createRelayTracerProvider(env, logger.child({ component: 'tracing' }));
}
