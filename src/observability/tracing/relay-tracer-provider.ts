import * as api from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type BatchSpanProcessorOptions,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { packageVersion } from '../../shared/package-version.js';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { SinkFactory } from '../../sink/create-sink.js';
import { decorateSinkFactory } from '../../sink/sink-decorator.js';
import { tracingDecorator } from './tracing-decorator.js';

export interface RelayTracing {
  /** Sinks whose records with a traceparent get a producer span each. */
  wrapSinkFactory(inner: SinkFactory): SinkFactory;
  /** Exports what is queued, for at most `timeoutMs`: an unreachable collector never holds the exit. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/**
 * The relay's tracer provider: loaded only when tracing is on (relay-tracing.ts).
 * Spans go through a BatchSpanProcessor: span.end() only queues, the export
 * runs on a timer, and a full queue drops spans. So an unreachable collector
 * costs failed exports (logged) and dropped spans, never a blocked publish or
 * a held-back confirm.
 */
export function createRelayTracerProvider(env: NodeJS.ProcessEnv, log: Logger): RelayTracing {
  // Export failures reach the log through the API's diagnostics, at warn and above (an unreachable collector is worth a warning).
  api.diag.setLogger(
    {
      error: (message, ...args) => log.warn({ event: 'tracing-error', args: args.map(String) }, message),
      warn: (message, ...args) => log.warn({ event: 'tracing-warning', args: args.map(String) }, message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  const spanProcessors = exporters.map((name) => new BatchSpanProcessor({ exporter: exporter(name), ...batchOptions(env) }));
  const resource = resourceFromAttributes({ 'service.name': 'outbox-tail', 'service.version': packageVersion() }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new TracerProvider({ resource, sampler: sampler(env), spanProcessors });
  const tracer = provider.getTracer('outbox-tail', packageVersion());
  log.info(
    { event: 'tracing-on', exporters, endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT },
    'OpenTelemetry tracing on: a producer span per published record that carries a traceparent',
  );
  return {
    wrapSinkFactory: (inner) => decorateSinkFactory(inner, () => tracingDecorator(api, tracer)),
    async shutdown(timeoutMs = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      try {
        const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), timeout]);
        if (outcome === 'timeout')
          log.warn({ event: 'tracing-shutdown-timeout', timeoutMs }, 'spans not exported before exit: the collector did not answer in time');
      } catch (error) {
        log.warn({ event: 'tracing-shutdown-failed', err: (error as Error).message }, 'exporting the last spans failed');
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The OTEL_BSP_* variables of the specification (this SDK no longer reads them itself); unset or invalid: the SDK's default. */
function batchOptions(env: NodeJS.ProcessEnv): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const options: Omit<BatchSpanProcessorOptions, 'exporter'> = {};
  const read = (name: string): number | undefined => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  const delay = read('OTEL_BSP_SCHEDULE_DELAY');
  const queue = read('OTEL_BSP_MAX_QUEUE_SIZE');
  const batch = read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE');
  const timeout = read('OTEL_BSP_EXPORT_TIMEOUT');
  if (delay !== undefined) options.scheduledDelayMillis = delay;
  if (queue !== undefined) options.maxQueueSize = queue;
  if (batch !== undefined) options.maxExportBatchSize = Math.min(batch, queue ?? 2048);
  if (timeout !== undefined) options.exportTimeoutMillis = timeout;
  return options;
}

function exporter(name: string): SpanExporter {
  if (name === 'otlp') return new OTLPTraceExporter();
  if (name === 'console') return new ConsoleSpanExporter();
  throw new OutboxTailError('CONFIG_INVALID', `OTEL_TRACES_EXPORTER=${name} is not supported by outbox-tail`, {
    hint: 'use otlp (OTLP over HTTP/protobuf; OTEL_EXPORTER_OTLP_ENDPOINT), console, or none',
  });
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the specification names them; default parentbased_always_on. */
function sampler(env: NodeJS.ProcessEnv): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const ratio = (): number => {
    const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
    return Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw new OutboxTailError('CONFIG_INVALID', `OTEL_TRACES_SAMPLER=${name} is not supported by outbox-tail`, {
        hint: 'use parentbased_always_on (the default), always_on, always_off, traceidratio, parentbased_always_off or parentbased_traceidratio',
      });
  }
}
