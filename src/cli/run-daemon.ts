import type { Logger } from 'pino';
import { preflight } from '../admin/preflight.js';
import { redactConfig } from '../config/resolve-config.js';
import type { RunConfig } from '../config/run-config.js';
import { EXIT, OutboxTailError } from '../errors/outbox-tail-error.js';
import { createLogger } from '../logging/create-logger.js';
import { RelayObservability } from '../observability/observability.js';
import { Relay, type RelayOptions } from '../relay/relay.js';
import { createKafkaSink } from '../sink/create-sink.js';

/**
 * The daemon's process life: log the effective config, preflight, run the
 * relay, and two-stage signal handling (first SIGTERM/SIGINT drains and
 * confirms, a second one exits at once).
 */
export async function runDaemon(config: RunConfig, extras: Omit<RelayOptions, 'config' | 'logger'> & { logger?: Logger } = {}): Promise<number> {
  const logger = extras.logger ?? createLogger(config.logLevel);
  logger.info({ event: 'start', config: redactConfig(config) }, 'outbox-tail starting');
  const sinkFactory = extras.sinkFactory ?? createKafkaSink;
  // Kafka is checked with the client and settings the relay will publish with.
  await preflight(config, logger, { kafka: sinkFactory(config, logger) });
  const observability = new RelayObservability(config, logger);
  const relay = new Relay({ ...extras, config, logger, sinkFactory: observability.wrapSinkFactory(sinkFactory) });
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
  }
  logger.info({ event: 'stopped' }, 'stopped cleanly');
  return EXIT.OK;
}
