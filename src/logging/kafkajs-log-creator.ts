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
      if (level <= KafkaLogLevel.ERROR && !debugErrors.has(message)) logger.error(line, message);
      else if (level === KafkaLogLevel.WARN && !debugMessages.has(message)) logger.warn(line, message);
      else logger.debug(line, message);
    };
}
