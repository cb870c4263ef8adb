import type { OutboxEvent } from '../../outbox-event.js';

const ILLEGAL = /[^A-Za-z0-9._-]/g;

/**
 * Compiles a topic template such as `outbox.event.{aggregate_type}` into a
 * function. Substituted values are sanitised to Kafka's legal characters
 * (illegal ones become `_`) and the name is cut to Kafka's 249-character limit.
 */
export function compileTopicTemplate(template: string): (event: OutboxEvent) => string {
  const parts = template.split(/(\{aggregate_type\}|\{event_type\}|\{table\})/);
  const fixed = parts.every((p) => !p.startsWith('{'));
  if (fixed) {
    const topic = sanitize(template);
    return () => topic;
  }
  const render = (event: OutboxEvent): string => {
    let out = '';
    for (const part of parts) {
      if (part === '{aggregate_type}') out += event.aggregateType;
      else if (part === '{event_type}') out += event.eventType;
      else if (part === '{table}') out += event.table;
      else out += part;
    }
    return sanitize(out);
  };
  // Memoised per aggregate type (and event type and table when the template
  // uses them): a stream has few distinct topics, so the regex runs once per
  // topic, not once per record. Bounded, for templates of high cardinality.
  const byEventType = parts.includes('{event_type}');
  const byTable = parts.includes('{table}');
  const cache = new Map<string, string>();
  return (event) => {
    let key = event.aggregateType;
    if (byEventType) key += `\u0000${event.eventType}`;
    if (byTable) key += `\u0000${event.table}`;
    let topic = cache.get(key);
    if (topic === undefined) {
      if (cache.size >= MAX_CACHED_TOPICS) cache.clear();
      topic = render(event);
      cache.set(key, topic);
    }
    return topic;
  };
}

const MAX_CACHED_TOPICS = 1024;

function sanitize(topic: string): string {
  let t = topic.replace(ILLEGAL, '_').slice(0, 249);
  // "." and ".." are the only names Kafka forbids outright among legal characters.
  if (t === '' || t === '.' || t === '..') t = `_${t}`;
  return t;
}
