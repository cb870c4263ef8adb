import type { Message, TopicMessages } from 'kafkajs';
import type { SinkRecord } from '../sink-record.js';

/**
 * A batch as kafkajs's sendBatch wants it: one entry per topic, records in
 * their order. The record itself is a kafkajs Message (key, value, headers;
 * kafkajs ignores the rest): no copy per record.
 */
export function topicMessages(records: readonly SinkRecord[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const r of records) {
    let list = byTopic.get(r.topic);
    if (!list) byTopic.set(r.topic, (list = []));
    list.push(r);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
