import type { MalformedRow, OutboxEvent } from '../outbox/outbox-event.js';
import { Lsn } from '../replication/lsn.js';
import type { SinkRecord } from './sink.js';
import { compileTopicTemplate } from './topic-template.js';

const RECORD_OVERHEAD = 70;

/** Builds Kafka records from outbox events, Debezium Outbox Event Router style. */
export class RecordBuilder {
  private readonly topicFor: (event: OutboxEvent) => string;

  constructor(topicTemplate: string) {
    this.topicFor = compileTopicTemplate(topicTemplate);
  }

  build(event: OutboxEvent): SinkRecord {
    const headers: Record<string, string> = { ...event.headers };
    // Our headers win over same-named user headers: consumers rely on them.
    headers.id = event.id;
    headers.event_type = event.eventType;
    headers.aggregate_type = event.aggregateType;
    headers.aggregate_id = event.aggregateId;
    if (event.createdAt !== null) headers.created_at = event.createdAt;
    headers.commit_lsn = Lsn.format(event.txn.commitLsn);
    let bytes = RECORD_OVERHEAD + event.payload.length + event.aggregateId.length;
    for (const k in headers) bytes += k.length + headers[k]!.length + 2;
    return { topic: this.topicFor(event), key: event.aggregateId, value: event.payload, headers, bytes };
  }

  /** A small pointer record for the dead-letter topic; never carries the payload. */
  deadLetter(row: { id: string | null; table: string; txn: OutboxEvent['txn'] }, reason: string, originalTopic: string | null, topic: string): SinkRecord {
    const body = {
      id: row.id,
      reason,
      table: row.table,
      commit_lsn: Lsn.format(row.txn.commitLsn),
      xid: row.txn.xid,
      original_topic: originalTopic,
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
