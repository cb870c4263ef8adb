import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OutboxEvent } from '../../../../src/pipeline/outbox-event.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { compileTopicTemplate } from '../../../../src/pipeline/publish/record-format/topic-template.js';

const event = (over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: 'e1',
  aggregateType: 'order',
  aggregateId: 'o-1',
  eventType: 'OrderCreated',
  payload: Buffer.from('{}'),
  headers: {},
  createdAt: null,
  table: 'public.outbox',
  txn: { seq: 1, xid: 7, commitLsn: Lsn.of(0x10n), commitTime: 0n, endLsn: null },
  ...over,
});

/**
 * Counts the runs of the sanitising regex: topic-template.ts promises that it
 * runs once per topic, not once per record, and that its cache is bounded.
 */
function countSanitising() {
  const replace = String.prototype.replace;
  let runs = 0;
  vi.spyOn(String.prototype, 'replace').mockImplementation(function (this: string, ...args: Parameters<typeof replace>) {
    if (args[0] instanceof RegExp && args[0].source === '[^A-Za-z0-9._-]') runs++;
    return replace.apply(this, args);
  });
  return () => runs;
}
afterEach(() => {
  vi.restoreAllMocks();
});

describe('topic template', () => {
  it('makes a template without placeholders one fixed, sanitised topic, computed once', () => {
    const runs = countSanitising();
    const topicFor = compileTopicTemplate('outbox events/all');
    expect(runs()).toBe(1);
    expect(topicFor(event())).toBe('outbox_events_all');
    expect(topicFor(event({ aggregateType: 'payment', eventType: 'Paid', table: 'app.outbox' }))).toBe('outbox_events_all');
    expect(runs()).toBe(1);
  });

  it('treats braces that are not a placeholder as text', () => {
    expect(compileTopicTemplate('{aggregate}.{aggregate_type}')(event())).toBe('_aggregate_.order');
    expect(compileTopicTemplate('{unknown}')(event())).toBe('_unknown_');
  });

  it('tells rows apart by every field the template uses', () => {
    const byEventType = compileTopicTemplate('x.{aggregate_type}.{event_type}.y');
    expect(byEventType(event())).toBe('x.order.OrderCreated.y');
    expect(byEventType(event({ eventType: 'OrderPaid' }))).toBe('x.order.OrderPaid.y');
    expect(byEventType(event())).toBe('x.order.OrderCreated.y');
    const byTable = compileTopicTemplate('x.{aggregate_type}.{table}.y');
    expect(byTable(event())).toBe('x.order.public.outbox.y');
    expect(byTable(event({ table: 'billing.outbox' }))).toBe('x.order.billing.outbox.y');
    expect(byTable(event())).toBe('x.order.public.outbox.y');
    const tableOnly = compileTopicTemplate('t.{table}');
    expect(tableOnly(event())).toBe('t.public.outbox');
    expect(tableOnly(event({ table: 'billing.outbox' }))).toBe('t.billing.outbox');
  });

  it('renders each distinct topic once, whatever the fields the template does not use', () => {
    const runs = countSanitising();
    const topicFor = compileTopicTemplate('outbox.{aggregate_type}');
    expect(runs()).toBe(0);
    expect(topicFor(event())).toBe('outbox.order');
    expect(topicFor(event({ eventType: 'OrderPaid', table: 'billing.outbox' }))).toBe('outbox.order');
    expect(topicFor(event({ aggregateType: 'payment' }))).toBe('outbox.payment');
    expect(topicFor(event({ eventType: 'OrderShipped' }))).toBe('outbox.order');
    expect(topicFor(event({ aggregateType: 'payment', eventType: 'X' }))).toBe('outbox.payment');
    expect(runs()).toBe(2);
  });

  it('remembers at most 1024 topics: the 1025th starts the cache afresh', () => {
    const runs = countSanitising();
    const topicFor = compileTopicTemplate('{aggregate_type}');
    for (let i = 0; i < 1024; i++) topicFor(event({ aggregateType: `a${i}` }));
    expect(runs()).toBe(1024);
    expect(topicFor(event({ aggregateType: 'a0' }))).toBe('a0');
    expect(topicFor(event({ aggregateType: 'a1023' }))).toBe('a1023');
    expect(runs()).toBe(1024); // all still cached
    expect(topicFor(event({ aggregateType: 'a1024' }))).toBe('a1024');
    expect(runs()).toBe(1025);
    expect(topicFor(event({ aggregateType: 'a1024' }))).toBe('a1024');
    expect(runs()).toBe(1025);
    expect(topicFor(event({ aggregateType: 'a0' }))).toBe('a0'); // dropped with the rest
    expect(runs()).toBe(1026);
  });

  it("never yields a name Kafka forbids: empty, '.' or '..' get a leading underscore", () => {
    const topicFor = compileTopicTemplate('{aggregate_type}');
    expect(topicFor(event({ aggregateType: '' }))).toBe('_');
    expect(topicFor(event({ aggregateType: '.' }))).toBe('_.');
    expect(topicFor(event({ aggregateType: '..' }))).toBe('_..');
    expect(topicFor(event({ aggregateType: '...' }))).toBe('...');
    expect(topicFor(event({ aggregateType: 'a.' }))).toBe('a.');
    expect(compileTopicTemplate('')(event())).toBe('_');
    expect(compileTopicTemplate('.')(event())).toBe('_.');
  });
});
