import { mapMessage } from '../../src/pipeline/assemble/message-mapper.js';
import type { MessageMapper } from '../../src/pipeline/assemble/transaction-assembler.js';

/**
 * A deliberately broken relay for --source messages, built in test code only:
 * it publishes a non-transactional message with our prefix as an event, as a
 * relay does that takes every message of its prefix (a message written with
 * transactional = false is streamed even when its transaction rolls back).
 * The rollback and non-transactional tests must catch it.
 */
const publishNonTransactional: MessageMapper = (message, txn) => mapMessage({ ...message, transactional: true }, txn);

export const MESSAGE_VARIANTS: Record<string, { messageMapper: MessageMapper }> = {
  'publish-non-transactional': { messageMapper: publishNonTransactional },
};
