import { logLevel as KafkaLogLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/**
 * kafkajs's log lines as our JSON log lines: the namespace as `kafkajs`, the
 * entry's fields kept, levels mapped (error, warn, anything below as debug).
 * `debugMessages` are warnings kafkajs emits for settings made on purpose;
 * they go to debug so they do not alarm operators. `debugErrors` are error
 * lines kafkajs writes on a retry that is part of normal operation (the
 * transactional producer's CONCURRENT_TRANSACTIONS after every commit).
 */
export function kafkajsLogCreator(logger: Logger, debugMessages: ReadonlySet<string> = new Set(), debugErrors: ReadonlySet<string> = new Set()): logCreator {
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _t, logger: _l, ...extra } = entry;
      const line = { kafkajs: namespace, ...extra };
      // The retry's error shows up twice: as kafkajs's message, and as the `error` of the Connection's response line.
      const expected = debugErrors.has(message) || (typeof extra.error === 'string' && debugErrors.has(extra.error));
      if (level <= KafkaLogLevel.ERROR && !expected) logger.error(line, message);
      else if (level === KafkaLogLevel.WARN && !debugMessages.has(message)) logger.warn(line, message);
      else logger.debug(line, message);
    };
}
