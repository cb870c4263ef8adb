import type { Lsn } from '../../shared/lsn.js';
import { MessageContent } from './message-content.js';
import type { MalformedRow, OutboxEvent, Transaction } from '../outbox-event.js';

/**
 * A logical decoding message with our prefix -> an OutboxEvent, exactly as a
 * table row would give it (same fields, same headers), or a MalformedRow
 * naming the message's LSN. Never nothing: an event that does not parse is
 * still routed by --on-malformed.
 */
export function mapMessage(message: { prefix: string; lsn: Lsn; transactional: boolean; content: Buffer }, txn: Transaction): OutboxEvent | MalformedRow {
  const origin = { prefix: message.prefix, lsn: message.lsn, transactional: message.transactional };
  const parsed = MessageContent.parse(message.content);
  if (!message.transactional) {
    // Sent even when its transaction rolled back: publishing it would break "nothing rolled back is ever sent".
    const id = 'reason' in parsed ? parsed.id : parsed.envelope.id;
    return {
      id,
      reason: 'non-transactional message (pg_logical_emit_message(false, ...)); outbox events must be transactional',
      table: message.prefix,
      txn,
      message: origin,
    };
  }
  if ('reason' in parsed) return { id: parsed.id, reason: parsed.reason, table: message.prefix, txn, message: origin };
  const { envelope, payload } = parsed;
  return {
    id: envelope.id,
    aggregateType: envelope.aggregateType,
    aggregateId: envelope.aggregateId,
    eventType: envelope.eventType,
    payload,
    headers: envelope.headers,
    createdAt: envelope.createdAt,
    table: message.prefix,
    txn,
  };
}
