import type { MalformedRow, OutboxEvent } from '../../outbox-event.js';
import { Lsn } from '../../../shared/lsn.js';
import { RECORD_HEADER_NAMES, type RecordHeaderName } from './record-headers.js';
import type { SinkRecord } from '../../../sink/sink-record.js';
import { compileTopicTemplate } from './topic-template.js';

const RECORD_OVERHEAD = 70;
/** Names of id, event_type, aggregate_type, aggregate_id, commit_lsn, plus 2 bytes each. */
const STANDARD_HEADERS_SIZE = 'id'.length + 'event_type'.length + 'aggregate_type'.length + 'aggregate_id'.length + 'commit_lsn'.length + 5 * 2;
const CREATED_AT_SIZE = 'created_at'.length + 2;

/** Builds Kafka records from outbox events, Debezium Outbox Event Router style. */
export class RecordBuilder {
  protected readonly topicFor: (event: OutboxEvent) => string;
  /** commit_lsn text of the last transaction seen: formatted once per transaction, not per record. */
  private lsnTxn: OutboxEvent['txn'] | null = null;
  private lsnText = '';

  /** Null when all six standard headers are sent: the common case keeps its fixed-shape object literal. */
  private readonly only: ReadonlySet<RecordHeaderName> | null;
  /** The topics the relay writes itself (dead letters, exactly-once watermarks): rendered from row data, a topic must never be one. */
  private readonly reserved: ReadonlySet<string>;

  constructor(topicTemplate: string, headerNames: readonly RecordHeaderName[] = RECORD_HEADER_NAMES, reservedTopics: readonly string[] = []) {
    this.topicFor = compileTopicTemplate(topicTemplate);
    this.only = RECORD_HEADER_NAMES.every((h) => headerNames.includes(h)) ? null : new Set(headerNames);
    this.reserved = new Set(reservedTopics);
  }

  /**
   * Why a built record must not be sent, or null: its topic, rendered from the
   * row, is one the relay writes itself, where a row's record would be taken
   * for a watermark or a dead letter. The row is then malformed (--on-malformed).
   */
  misrouted(record: SinkRecord): string | null {
    if (!this.reserved.has(record.topic)) return null;
    return `the topic template renders ${record.topic}, a topic the relay writes itself (dead letters or exactly-once watermarks)`;
  }

  build(event: OutboxEvent): SinkRecord {
    if (this.only !== null) return this.buildSelected(event, this.only);
    const commitLsn = this.commitLsnOf(event.txn);
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

  protected commitLsnOf(txn: OutboxEvent['txn']): string {
    if (txn !== this.lsnTxn) {
      this.lsnTxn = txn;
      this.lsnText = Lsn.format(txn.commitLsn);
    }
    return this.lsnText;
  }

  /** A chosen subset of the standard headers (plus the user's own, which always pass). */
  private buildSelected(event: OutboxEvent, only: ReadonlySet<RecordHeaderName>): SinkRecord {
    const headers: Record<string, string> = { ...event.headers };
    headers.id = event.id;
    if (only.has('event_type')) headers.event_type = event.eventType;
    if (only.has('aggregate_type')) headers.aggregate_type = event.aggregateType;
    if (only.has('aggregate_id')) headers.aggregate_id = event.aggregateId;
    if (only.has('created_at') && event.createdAt !== null) headers.created_at = event.createdAt;
    if (only.has('commit_lsn')) headers.commit_lsn = this.commitLsnOf(event.txn);
    let bytes = RECORD_OVERHEAD + event.payload.length + event.aggregateId.length;
    for (const k in headers) bytes += k.length + headers[k]!.length + 2;
    return { topic: this.topicFor(event), key: event.aggregateId, value: event.payload, headers, bytes };
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
