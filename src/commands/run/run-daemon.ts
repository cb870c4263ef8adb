import type { Logger } from 'pino';
import { preflight } from '../../relay/preflight.js';
import { redactConfig } from '../../config/resolve-config.js';
import type { RunConfig } from '../../config/run-config.js';
import { kafkaTransport, postgresTransport } from '../../config/transport-security.js';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { createLogger } from '../../shared/create-logger.js';
import { RelayObservability } from '../../observability/observability.js';
import { Relay, type RelayOptions } from '../../relay/relay.js';
import { relayStages, type RelayStages } from './relay-wiring.js';
import { createKafkaSink } from '../../sink/create-sink.js';
import { withPgClient } from '../../postgres/with-pg-client.js';
import { recoverSlot } from '../recover/recover-slot.js';
import { startRelayTracing, tracingRequested } from '../../observability/tracing/relay-tracing.js';

/**
 * The daemon's process life: log the effective config, preflight, run the
 * relay, and two-stage signal handling (first SIGTERM/SIGINT drains and
 * confirms, a second one exits at once).
 */
/** How long an invalidated slot may still be held by its ending walsender before recover gives up. */
const SLOT_RELEASE_TIMEOUT_MS = 30_000;

/**
 * --on-slot-lost recover: `outbox-tail recover` in the daemon. A slot another
 * relay recovered first (SLOT_NOT_LOST) is fine: this one streams from it.
 */
async function recoverLostSlot({ pg, recover: settings }: RelayStages, recoverMarginMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + SLOT_RELEASE_TIMEOUT_MS;
  for (;;) {
    try {
      const report = await withPgClient(pg, (client) =>
        recoverSlot(client, settings, { sinceMs: null, marginMs: recoverMarginMs, dryRun: false, batchSize: 1000 }, logger),
      );
      logger.warn(
        {
          event: 'slot-recovered',
          lsn: report.slotLsn,
          backfillFrom: report.backfillFrom,
          republished: report.replay.published,
          malformed: report.replay.malformed.length,
        },
        'slot recreated and the outbox backfilled from the table since the recorded position',
      );
      return;
    } catch (error) {
      if (OutboxTailError.is(error) && error.code === 'SLOT_NOT_LOST') return;
      if (!OutboxTailError.is(error) || error.code !== 'SLOT_ACTIVE' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** What a caller may add to the relay the config describes: the seams of the negative controls and the bench. */
export type DaemonExtras = Omit<RelayOptions, 'supervisor' | 'session' | 'sink' | 'pg' | 'logger'> & { logger?: Logger };

export async function runDaemon(config: RunConfig, extras: DaemonExtras = {}): Promise<number> {
  const logger = extras.logger ?? createLogger(config.logLevel);
  logger.info({ event: 'start', config: redactConfig(config) }, 'outbox-tail starting');
  for (const posture of [postgresTransport(config), kafkaTransport(config)]) {
    if (posture.risk) logger.warn({ event: 'insecure-transport', transport: posture.summary, fix: posture.fix }, posture.risk);
  }
  const stages = relayStages(config);
  const sinkFactory = extras.sinkFactory ?? createKafkaSink;
  const recover = config.onSlotLost === 'recover' ? (extras.recoverSlot ?? (() => recoverLostSlot(stages, config.recoverMarginMs, logger))) : undefined;
  // Kafka is checked with the client and settings the relay will publish with.
  try {
    await preflight(stages.preflight, logger, { kafka: sinkFactory(stages.sink, logger) });
  } catch (error) {
    if (!recover || !OutboxTailError.is(error) || (error.code !== 'SLOT_MISSING' && error.code !== 'SLOT_INVALIDATED')) throw error;
    logger.warn(
      { event: 'slot-lost', code: error.code, err: error.message, hint: error.hint },
      'slot lost: --on-slot-lost recover rebuilds it from the outbox table',
    );
    await recover();
    await preflight(stages.preflight, logger, { kafka: sinkFactory(stages.sink, logger) });
  }
  const observability = new RelayObservability(stages.observability, logger);
  // OpenTelemetry only when the OTEL_* variables ask for it (docs/tracing.md); its SDK is loaded only then.
  const tracing = tracingRequested(process.env) ? await startRelayTracing(process.env, logger) : null;
  const relay = new Relay({
    ...extras,
    supervisor: stages.supervisor,
    session: stages.session,
    sink: stages.sink,
    pg: stages.pg,
    logger,
    sinkFactory: observability.wrapSinkFactory(tracing ? tracing.wrapSinkFactory(sinkFactory) : sinkFactory),
    ...(recover ? { recoverSlot: recover } : {}),
  });
  await observability.start(relay.stats);
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      logger.info({ event: 'shutdown', signal }, 'stopping: publishing and confirming in-flight records (send the signal again to exit at once)');
      relay.stop();
      setTimeout(() => {
        logger.error({ event: 'shutdown-timeout', code: 'SHUTDOWN_TIMEOUT' }, 'graceful shutdown took too long; exiting');
        process.exit(EXIT.FATAL);
      }, config.shutdownTimeoutMs + 5_000).unref();
    } else {
      logger.warn({ event: 'shutdown-now', signal }, 'second signal: exiting now; unconfirmed records will be replayed');
      process.exit(130);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await relay.run();
  } catch (error) {
    if (OutboxTailError.is(error)) logger.fatal({ event: 'fatal', code: error.code, err: error.message, hint: error.hint }, error.describe());
    throw error;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await observability.stop();
    await tracing?.shutdown();
  }
  logger.info({ event: 'stopped' }, 'stopped cleanly');
  return EXIT.OK;
}
