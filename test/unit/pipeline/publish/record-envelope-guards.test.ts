import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Checkpointer } from '../../../../src/pipeline/checkpoint/checkpointer.js';
import { DEFAULT_OUTBOX_COLUMNS } from '../../../../src/pipeline/assemble/outbox-columns.js';
import { isMalformed, RowMapper } from '../../../../src/pipeline/assemble/row-mapper.js';
import type { RelationColumn } from '../../../../src/pipeline/decode/pgoutput-decoder.js';
import type { OutboxEvent, PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { AtLeastOncePublisher } from '../../../../src/pipeline/publish/at-least-once-publisher.js';
import { badRowPolicies } from '../../../../src/pipeline/publish/bad-row-policy.js';
import type { PublishingStageOptions } from '../../../../src/pipeline/publish/publish-queue.js';
import { createRecordBuilder } from '../../../../src/pipeline/publish/record-format/create-record-builder.js';
import { RECORD_HEADER_NAMES } from '../../../../src/pipeline/publish/record-format/record-headers.js';
import { embedsPayload } from '../../../../src/pipeline/publish/record-format/record-formats.js';
import type { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import type { SinkRecord } from '../../../../src/sink/sink-record.js';

const TXN: Transaction = { seq: 1, xid: 42, commitLsn: Lsn.of(0x100n), commitTime: 0n, endLsn: null };
const TEXT = 25;
const JSONB = 3802;
const relation = (payloadType: number): RelationColumn[] =>
  ['id', 'aggregate_type', 'aggregate_id', 'event_type', 'payload'].map((name, i) => ({
    name,
    typeOid: name === 'payload' ? payloadType : TEXT,
    typeMod: -1,
    isKey: i === 0,
  }));
const FORGING = '1,"id":"forged-id","type":"Refunded"';

/** A row through the row mapper and the structured CloudEvents builder, as the relay maps and builds it. */
function structuredEvent(payloadType: number, payload: string): Record<string, unknown> | { malformed: string } {
  const mapper = new RowMapper(DEFAULT_OUTBOX_COLUMNS, 'public.outbox', { jsonPayload: true });
  mapper.onRelation(relation(payloadType));
  const row = mapper.map(
    ['evt-1', 'order', 'o-1', 'OrderCreated', payload].map((v) => Buffer.from(v)),
    TXN,
  );
  if (isMalformed(row)) return { malformed: row.reason };
  const builder = createRecordBuilder({
    topic: 'outbox.event.{aggregate_type}',
    recordHeaders: RECORD_HEADER_NAMES,
    recordFormat: 'cloudevents-structured',
    cloudeventsSource: '/outbox-tail/{table}',
  });
  return JSON.parse(builder.build(row).value.toString('utf8')) as Record<string, unknown>;
}

describe('a payload cannot forge the structured CloudEvent it is embedded in', () => {
  it("refuses a non-JSON text payload as malformed instead of splicing it: the event's id and type stay the relay's own", () => {
    const result = structuredEvent(TEXT, FORGING);
    expect(result).not.toMatchObject({ id: 'forged-id' });
    expect(result).not.toMatchObject({ type: 'Refunded' });
    expect(result).toEqual({
      malformed: 'column payload is not valid JSON (its type is not json or jsonb, and --record-format cloudevents-structured embeds it in the event)',
    });
  });

  it('embeds a text payload that is JSON, and a jsonb payload (never parsed: PostgreSQL wrote it as JSON)', () => {
    expect(structuredEvent(TEXT, '{"total": 1}')).toMatchObject({ id: 'evt-1', type: 'OrderCreated', data: { total: 1 } });
    expect(structuredEvent(JSONB, '{"total": 2}')).toMatchObject({ id: 'evt-1', type: 'OrderCreated', data: { total: 2 } });
  });

  it('checks the payload only in the formats that splice it (default, cloudevents-binary: the value is the payload)', () => {
    expect(embedsPayload('cloudevents-structured')).toBe(true);
    expect(embedsPayload('default')).toBe(false);
    expect(embedsPayload('cloudevents-binary')).toBe(false);
    const mapper = new RowMapper(DEFAULT_OUTBOX_COLUMNS, 'public.outbox', { jsonPayload: false });
    mapper.onRelation(relation(TEXT));
    expect(
      isMalformed(
        mapper.map(
          ['evt-1', 'order', 'o-1', 'OrderCreated', FORGING].map((v) => Buffer.from(v)),
          TXN,
        ),
      ),
    ).toBe(false);
  });
});

const event = (id: string, aggregateType: string): PipelineItem => ({
  kind: 'event',
  event: {
    id,
    aggregateType,
    aggregateId: `k-${id}`,
    eventType: 'E',
    payload: Buffer.from('{}'),
    headers: {},
    createdAt: null,
    table: 'public.outbox',
    txn: TXN,
  } satisfies OutboxEvent,
});

/** An at-least-once publishing stage over a recording sink; the topic template is the row's aggregate type. */
function stage(onMalformed: 'fail' | 'dead-letter') {
  const checkpointer = new Checkpointer();
  const sent: SinkRecord[] = [];
  const builder: RecordBuilder = createRecordBuilder({
    topic: '{aggregate_type}',
    recordHeaders: RECORD_HEADER_NAMES,
    recordFormat: 'default',
    cloudeventsSource: '/outbox-tail/{table}',
    offsetsTopic: 'outbox-tail.offsets',
    deadLetterTopic: 'outbox.dlq',
  });
  const options: PublishingStageOptions = {
    sink: { send: async (records) => void sent.push(...records) },
    builder,
    limits: { batchMaxMessages: 100, batchMaxBytes: 1_000_000, batchMaxWaitMs: 0, maxInFlightMessages: 1000, maxInFlightBytes: 1 << 24 },
    policies: badRowPolicies({ onOversize: 'fail', onMalformed, deadLetterTopic: 'outbox.dlq' }),
    flow: { isPaused: false, pause: () => undefined, resume: () => undefined },
    acks: checkpointer,
    confirm: async () => undefined,
    counters: {
      eventsReceived: 0,
      recordsPublished: 0,
      deadLettered: 0,
      batches: 0,
      kafkaTransactions: 0,
      kafkaTransactionsPgTransactions: 0,
      onPublished: () => undefined,
    },
    logger: pino({ level: 'silent' }),
  };
  const publisher = new AtLeastOncePublisher(options);
  const push = (...items: PipelineItem[]) => {
    const t: Transaction = { ...TXN, endLsn: null };
    checkpointer.begin(t);
    for (const item of items) publisher.enqueue({ ...item, ...(item.kind === 'event' ? { event: { ...item.event, txn: t } } : {}) } as PipelineItem);
    t.endLsn = Lsn.of(t.commitLsn + 10n);
    checkpointer.committed(t);
  };
  return { publisher, sent, push };
}

describe('a row cannot route its record into a topic the relay writes itself', () => {
  it('dead-letters, under dead-letter, a row whose topic renders as the offsets (watermark) topic or the dead-letter topic', async () => {
    const s = stage('dead-letter');
    s.push(event('a', 'order'), event('watermark', 'outbox-tail.offsets'), event('dlq', 'outbox.dlq'));
    s.publisher.drain();
    await s.publisher.run();
    expect(s.sent.map((r) => [r.headers.id, r.topic])).toEqual([
      ['a', 'order'],
      ['watermark', 'outbox.dlq'],
      ['dlq', 'outbox.dlq'],
    ]);
    // The two refused rows went as dead-letter pointers, not as their records.
    expect(JSON.parse(s.sent[1]!.value.toString())).toMatchObject({ id: 'watermark', reason: expect.stringMatching(/^malformed: .*outbox-tail\.offsets/) });
    expect(JSON.parse(s.sent[2]!.value.toString())).toMatchObject({ id: 'dlq', reason: expect.stringMatching(/^malformed: .*outbox\.dlq/) });
  });

  it('halts, under fail, on a row whose topic renders as the offsets topic, publishing nothing of it', async () => {
    const s = stage('fail');
    s.push(event('a', 'order'), event('watermark', 'outbox-tail.offsets'));
    s.publisher.drain();
    await expect(s.publisher.run()).rejects.toMatchObject({ code: 'MALFORMED_ROW', retriable: false });
    expect(s.sent.map((r) => r.topic)).toEqual(['order']);
  });
});
