import type { OutboxEvent } from '../outbox/outbox-event.js';

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
  return (event) => {
    let out = '';
    for (const part of parts) {
      if (part === '{aggregate_type}') out += event.aggregateType;
      else if (part === '{event_type}') out += event.eventType;
      else if (part === '{table}') out += event.table;
      else out += part;
    }
    return sanitize(out);
  };
}

function sanitize(topic: string): string {
  let t = topic.replace(ILLEGAL, '_').slice(0, 249);
  // "." and ".." are the only names Kafka forbids outright among legal characters.
  if (t === '' || t === '.' || t === '..') t = `_${t}`;
  return t;
}
