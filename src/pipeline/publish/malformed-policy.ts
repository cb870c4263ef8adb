import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { MalformedRow } from '../outbox-event.js';
import { Lsn } from '../../shared/lsn.js';
import type { RecordBuilder } from './record-format/record-builder.js';
import type { SinkRecord } from '../../sink/sink-record.js';
import type { BadRowPolicy } from './bad-row-policy.js';

/**
 * What is published for a row that could not be mapped: a pointer record on
 * the dead-letter topic, or null under `fail`: the relay publishes and
 * confirms everything before the row, then halts on it. Never skipped.
 */
export function malformedRowRecord(row: MalformedRow, policy: BadRowPolicy, builder: Pick<RecordBuilder, 'malformedToDeadLetter'>): SinkRecord | null {
  return policy.action === 'dead-letter' ? builder.malformedToDeadLetter(row, policy.topic) : null;
}

export function malformedRowError(row: MalformedRow): OutboxTailError {
  if (row.message) return malformedMessageError(row, row.message);
  return new OutboxTailError(
    'MALFORMED_ROW',
    `outbox row id=${row.id ?? '(unreadable)'} in ${row.table} is malformed: ${row.reason} (commit LSN ${Lsn.format(row.txn.commitLsn)}); the slot is not confirmed past it`,
    {
      hint: 'fix the row or the --column-* mapping, or run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
      exitCode: EXIT.BAD_INPUT,
    },
  );
}

function malformedMessageError(row: MalformedRow, message: NonNullable<MalformedRow['message']>): OutboxTailError {
  const where = `logical decoding message at LSN ${Lsn.format(message.lsn)} (prefix ${message.prefix}, id=${row.id ?? '(unreadable)'})`;
  if (!message.transactional) {
    return new OutboxTailError(
      'NON_TRANSACTIONAL_MESSAGE',
      `${where} is non-transactional: ${row.reason}; it is not published and the slot is not confirmed past it`,
      {
        hint: 'write events with pg_logical_emit_message(true, ...) (outbox_tail.emit does); to get past this one, run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
        exitCode: EXIT.BAD_INPUT,
      },
    );
  }
  return new OutboxTailError(
    'MALFORMED_MESSAGE',
    `${where} is malformed: ${row.reason} (commit LSN ${Lsn.format(row.txn.commitLsn)}); the slot is not confirmed past it`,
    {
      hint: 'fix the writer (docs/table-less-source.md, "Message content format"), or run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
      exitCode: EXIT.BAD_INPUT,
    },
  );
}
