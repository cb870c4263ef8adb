import type { MalformedRow, OutboxEvent } from '../outbox/outbox-event.js';
import { Lsn } from '../replication/lsn.js';
import type { SinkRecord } from './sink.js';
import { compileTopicTemplate } from './topic-template.js';

const RECORD_OVERHEAD = 70;
/** Names of id, event_type, aggregate_type, aggregate_id, commit_lsn, plus 2 bytes each. */
const STANDARD_HEADERS_SIZE = 'id'.length + 'event_type'.length + 'aggregate_type'.length + 'aggregate_id'.length + 'commit_lsn'.length + 5 * 2;
const CREATED_AT_SIZE = 'created_at'.length + 2;

/** Builds Kafka records from outbox events, Debezium Outbox Event Router style. */
export class RecordBuilder {
  private readonly topicFor: (event: OutboxEvent) => string;
  /** commit_lsn text of the last transaction seen: formatted once per transaction, not per record. */
  private lsnTxn: OutboxEvent['txn'] | null = null;
  private lsnText = '';

  constructor(topicTemplate: string) {
    this.topicFor = compileTopicTemplate(topicTemplate);
  }

  build(event: OutboxEvent): SinkRecord {
    const txn = event.txn;
    if (txn !== this.lsnTxn) {
      this.lsnTxn = txn;
      this.lsnText = Lsn.format(txn.commitLsn);
    }
    const commitLsn = this.lsnText;
    const { id, eventType, aggregateType, aggregateId, createdAt } = event;
    // Sizes of the standard header names plus 2 per header, as in the loop below.
    let bytes =
      RECORD_OVERHEAD +
      event.payload.length +
      aggregateId.length +
      STANDARD_HEADERS_SIZE +
      id.length +
      eventType.length +
      aggregateType.length +
      aggregateId.length +
      commitLsn.length;
    let headers: Record<string, string>;
    let userHeaders = false;
    for (const _ in event.headers) {
      userHeaders = true;
      break;
    }
    if (!userHeaders) {
      // The common case: one object literal of a fixed shape, no spread, no size loop.
      if (createdAt !== null) {
        headers = { id, event_type: eventType, aggregate_type: aggregateType, aggregate_id: aggregateId, created_at: createdAt, commit_lsn: commitLsn };
        bytes += CREATED_AT_SIZE + createdAt.length;
      } else {
        headers = { id, event_type: eventType, aggregate_type: aggregateType, aggregate_id: aggregateId, commit_lsn: commitLsn };
      }
    } else {
      headers = { ...event.headers };
      // Our headers win over same-named user headers: consumers rely on them.
      headers.id = id;
      headers.event_type = eventType;
      headers.aggregate_type = aggregateType;
      headers.aggregate_id = aggregateId;
      if (createdAt !== null) headers.created_at = createdAt;
      headers.commit_lsn = commitLsn;
      bytes = RECORD_OVERHEAD + event.payload.length + aggregateId.length;
      for (const k in headers) bytes += k.length + headers[k]!.length + 2;
    }
    return { topic: this.topicFor(event), key: aggregateId, value: event.payload, headers, bytes };
  }

  /** A small pointer record for the dead-letter topic; never carries the payload. */
  deadLetter(
    row: { id: string | null; table: string; txn: OutboxEvent['txn']; message?: MalformedRow['message'] },
    reason: string,
    originalTopic: string | null,
    topic: string,
  ): SinkRecord {
    const body = {
      id: row.id,
      reason,
      table: row.table,
      commit_lsn: Lsn.format(row.txn.commitLsn),
      xid: row.txn.xid,
      original_topic: originalTopic,
      // A logical decoding message: where to find it in the WAL (pg_waldump), since no table holds it.
      ...(row.message ? { message_lsn: Lsn.format(row.message.lsn), message_prefix: row.message.prefix, transactional: row.message.transactional } : {}),
    };
    const value = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { reason, commit_lsn: body.commit_lsn };
    if (row.id) headers.id = row.id;
    return { topic, key: row.id ?? `xid-${row.txn.xid}`, value, headers, bytes: RECORD_OVERHEAD + value.length + 100 };
  }

  malformedToDeadLetter(row: MalformedRow, topic: string): SinkRecord {
    return this.deadLetter(row, `malformed: ${row.reason}`, null, topic);
  }
}
