import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { packageVersion } from '../shared/package-version.js';
import type { RelayStats } from '../pipeline/relay-stats.js';
import type { SinkFactory } from '../sink/create-sink.js';
import { isLoopback, parseListen, startMetricsServer, type HealthReport, type MetricsServer } from './metrics-server.js';
import { createRelayMetrics, type RelayMetrics } from './relay-metrics.js';
import { SlotMonitor, type SlotMonitorSettings } from './slot-monitor.js';

/** What observability uses: the slot monitor's settings and --metrics-listen. */
export interface ObservabilitySettings extends SlotMonitorSettings {
  metricsListen: string;
}

/**
 * Everything operational around one Relay: a private prom-client Registry,
 * the relay's metrics, the slot poller with stall detection, and the HTTP
 * endpoint (/metrics, /healthz, /readyz) on --metrics-listen.
 *
 *   const obs = new RelayObservability(stages.observability, logger);
 *   const relay = new Relay({ ...stages, logger, sinkFactory: obs.wrapSinkFactory(createKafkaSink) });
 *   await obs.start(relay.stats);
 *   try { await relay.run(); } finally { await obs.stop(); }
 */
export class RelayObservability {
  readonly registry = new Registry();
  private metricsOrNull: RelayMetrics | null = null;
  private stats: RelayStats | null = null;
  private monitor: SlotMonitor | null = null;
  private serverOrNull: MetricsServer | null = null;
  private readonly log: Logger;

  constructor(
    private readonly config: ObservabilitySettings,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'observability', slot: config.slot });
    collectDefaultMetrics({ register: this.registry });
  }

  get metrics(): RelayMetrics | null {
    return this.metricsOrNull;
  }

  get server(): MetricsServer | null {
    return this.serverOrNull;
  }

  /** A sink factory whose sinks are observed (batches, sizes, send time). */
  wrapSinkFactory(inner: SinkFactory): SinkFactory {
    return (settings, logger) => {
      const sink = inner(settings, logger);
      return this.metricsOrNull ? this.metricsOrNull.instrumentSink(sink) : sink;
    };
  }

  async start(stats: RelayStats): Promise<void> {
    this.stats = stats;
    this.metricsOrNull = createRelayMetrics(this.registry, stats, { version: packageVersion() });
    this.monitor = new SlotMonitor({ config: this.config, stats, metrics: this.metricsOrNull, logger: this.log });
    this.monitor.start();
    if (this.config.metricsListen === 'off') {
      this.log.info({ event: 'metrics-off' }, 'metrics endpoint disabled (--metrics-listen off)');
      return;
    }
    const { host } = parseListen(this.config.metricsListen);
    try {
      this.serverOrNull = await startMetricsServer({ listen: this.config.metricsListen, registry: this.registry, health: () => this.health() });
    } catch (error) {
      // Relaying matters more than metrics: keep going, say so loudly. A
      // scraper sees the target down and a container HEALTHCHECK fails.
      this.log.error(
        {
          event: 'metrics-unavailable',
          code: 'METRICS_LISTEN_FAILED',
          address: this.config.metricsListen,
          err: (error as NodeJS.ErrnoException).code ?? (error as Error).message,
        },
        `cannot serve metrics on --metrics-listen ${this.config.metricsListen}; relaying without /metrics, /healthz and /readyz (pick a free address, e.g. 127.0.0.1:0 for a random port, or off)`,
      );
      return;
    }
    this.log.info(
      { event: 'metrics-listening', address: this.serverOrNull.address },
      `metrics on http://${this.serverOrNull.address}/metrics, health on /healthz and /readyz`,
    );
    if (!isLoopback(host)) {
      this.log.warn(
        { event: 'metrics-exposed', address: this.serverOrNull.address },
        'the metrics endpoint listens beyond loopback: restrict access to it (firewall, network policy)',
      );
    }
  }

  health(): HealthReport {
    const state = this.stats?.state ?? 'starting';
    const stalled = this.monitor?.stall.isStalled ?? false;
    const reason = stalled
      ? this.monitor!.stall.reason
      : state === 'stopped'
        ? 'the relay stopped'
        : state === 'standby'
          ? 'standby: another relay holds the slot'
          : state === 'streaming'
            ? null
            : `state ${state}`;
    return {
      healthy: !stalled && state !== 'stopped',
      ready: !stalled && state === 'streaming',
      state,
      reason,
    };
  }

  async stop(): Promise<void> {
    await this.monitor?.stop();
    await this.serverOrNull?.close();
    this.monitor = null;
    this.serverOrNull = null;
  }
}
