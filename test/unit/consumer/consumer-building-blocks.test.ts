import { describe, expect, it } from 'vitest';
import { isTransientPgError } from '../../../src/consumer/consumer-errors.js';
import { buildDeadLetterMessage } from '../../../src/consumer/dead-letter.js';
import { validateOptions } from '../../../src/consumer/consumer-options.js';
import type { IdempotentConsumerOptions } from '../../../src/consumer/idempotent-consumer.js';
import { insertProcessedSql } from '../../../src/consumer/processed-messages.js';
import { quoteTableName } from '../../../src/consumer/sql.js';
import { buildOutboxInsert } from '../../../src/consumer/write-outbox-event.js';

const base: IdempotentConsumerOptions = {
  brokers: ['127.0.0.1:9092'],
  groupId: 'billing',
  topics: ['outbox.event.order'],
  database: 'postgresql://localhost/app',
  handler: async () => undefined,
};

describe('consumer options', () => {
  it('accepts the minimal options', () => {
    expect(() => validateOptions(base)).not.toThrow();
  });

  it.each([
    ['no brokers', { brokers: [] }, /brokers/],
    ['empty group', { groupId: ' ' }, /groupId/],
    ['no topics', { topics: [] }, /topics/],
    ['no database', { database: '' }, /database/],
    ['maxAttempts 0', { maxAttempts: 0 }, /maxAttempts/],
    ['dead-letter without topic', { onFailure: 'dead-letter' }, /deadLetterTopic is required/],
    ['unknown policy', { onFailure: 'skip' }, /onFailure/],
    ['batch of 0', { batch: { maxRecords: 0 } }, /batch.maxRecords/],
    ['table with a quote', { processedTable: 'x"; drop table y; --' }, /invalid table name/],
    // A Node timer above 2^31-1 ms fires after 1 ms: a huge delay would act as none.
    ['backoff above the longest timer', { backoff: { maxMs: 3_000_000_000 } }, /backoff.maxMs .*2147483647/],
    [
      'connect timeout above the longest timer',
      { database: { url: 'postgresql://localhost/app', connectTimeoutMs: 3_000_000_000 } },
      /connectTimeoutMs .*2147483647/,
    ],
    ['negative connect timeout', { database: { url: 'postgresql://localhost/app', connectTimeoutMs: -1 } }, /connectTimeoutMs/],
    ['kafkajs session timeout above the longest timer', { consumer: { sessionTimeout: 3_000_000_000 } }, /consumer.sessionTimeout .*2147483647/],
    ['kafkajs fetch wait above the longest timer', { consumer: { maxWaitTimeInMs: 3_000_000_000 } }, /consumer.maxWaitTimeInMs .*2147483647/],
  ])('rejects %s with CONFIG_INVALID', (_name, patch, message) => {
    expect(() => validateOptions({ ...base, ...(patch as object) })).toThrow(message);
    try {
      validateOptions({ ...base, ...(patch as object) });
    } catch (error) {
      expect((error as { code?: string }).code).toBe('CONFIG_INVALID');
    }
  });
});

describe('SQL building', () => {
  it('quotes schema-qualified table names and refuses anything else', () => {
    expect(quoteTableName('processed_messages')).toBe('"processed_messages"');
    expect(quoteTableName('app.Processed')).toBe('"app"."Processed"');
    expect(() => quoteTableName('a.b.c')).toThrow(/schema.table/);
    expect(insertProcessedSql('app.done')).toContain('insert into "app"."done" (consumer_group, message_id)');
  });

  it('builds the outbox insert with the default mapping, a JSON payload and a generated id', () => {
    const { sql, values, id } = buildOutboxInsert({ aggregateType: 'order', aggregateId: 'o-1', eventType: 'OrderPlaced', payload: { total: 1 } });
    expect(sql).toBe('insert into "public"."outbox" ("id", "aggregate_type", "aggregate_id", "event_type", "payload") values ($1, $2, $3, $4, $5::jsonb)');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(values).toEqual([id, 'order', 'o-1', 'OrderPlaced', '{"total":1}']);
  });

  it('maps columns, keeps a string payload as JSON text and writes headers', () => {
    const { sql, values } = buildOutboxInsert(
      { id: 'e-1', aggregateType: 'order', aggregateId: 'o-1', eventType: 'E', payload: '[1,2]', headers: { tenant: 'acme' } },
      { table: 'events.out', columns: { id: 'event_id', payload: 'body', headers: 'meta' } },
    );
    expect(sql).toBe(
      'insert into "events"."out" ("event_id", "aggregate_type", "aggregate_id", "event_type", "body", "meta") values ($1, $2, $3, $4, $5::jsonb, $6::jsonb)',
    );
    expect(values).toEqual(['e-1', 'order', 'o-1', 'E', '[1,2]', '{"tenant":"acme"}']);
  });

  it('refuses input the relay could not publish faithfully', () => {
    const ok = { aggregateType: 'order', aggregateId: 'o-1', eventType: 'E', payload: {} };
    expect(() => buildOutboxInsert({ ...ok, aggregateId: '' })).toThrow(/aggregateId/);
    expect(() => buildOutboxInsert({ ...ok, payload: undefined })).toThrow(/not JSON-serialisable/);
    expect(() => buildOutboxInsert({ ...ok, headers: { n: 1 as unknown as string } })).toThrow(/header "n" must be a string/);
  });
});

describe('dead-letter record', () => {
  it('points at the original record, carries the error, never the payload', () => {
    const m = buildDeadLetterMessage({
      id: 'e-1',
      error: 'x'.repeat(3000),
      consumerGroup: 'billing',
      topic: 'outbox.event.order',
      partition: 2,
      offset: '17',
      key: 'o-1',
      attempts: 5,
      failedAt: new Date('2026-11-30T00:00:00Z'),
    });
    expect(m.key).toBe('o-1');
    expect(m.headers).toMatchObject({
      id: 'e-1',
      original_topic: 'outbox.event.order',
      original_partition: '2',
      original_offset: '17',
      consumer_group: 'billing',
    });
    const body = JSON.parse(m.value as string) as Record<string, unknown>;
    expect(body).toMatchObject({ id: 'e-1', original_partition: 2, original_offset: '17', attempts: 5, failed_at: '2026-11-30T00:00:00.000Z' });
    expect((body.error as string).length).toBeLessThanOrEqual(2001);
    expect(Object.keys(body)).not.toContain('payload');
  });

  it('keys a record without id or key by its position', () => {
    const m = buildDeadLetterMessage({ id: null, error: 'poison', consumerGroup: 'g', topic: 't', partition: 0, offset: '3', key: null, attempts: 1 });
    expect(m.key).toBe('t-0-3');
    expect(m.headers).not.toHaveProperty('id');
  });
});

describe('transient database errors', () => {
  it('are connection, shutdown, overload, deadlock and serialization failures only', () => {
    for (const code of ['08006', '57P01', '53300', '40001', '40P01', 'ECONNREFUSED']) expect(isTransientPgError({ code })).toBe(true);
    expect(isTransientPgError(new Error('Connection terminated unexpectedly'))).toBe(true);
    for (const code of ['23505', '42P01', '22P02']) expect(isTransientPgError({ code })).toBe(false);
    expect(isTransientPgError(new Error('handler refuses'))).toBe(false);
  });
});
