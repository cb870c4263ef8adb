import type { Message } from 'kafkajs';

export interface DeadLetterInput {
  /** Outbox id, or null for a record that has none. */
  id: string | null;
  error: string;
  consumerGroup: string;
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  attempts: number;
  eventType?: string | undefined;
  aggregateType?: string | undefined;
  aggregateId?: string | undefined;
  failedAt?: Date;
}

const MAX_ERROR_LENGTH = 2000;

/**
 * Pure: a small pointer record for the dead-letter topic. It never carries the
 * payload (it may hold personal data); the original stays at topic/partition/offset.
 * Keyed by the original key, so one aggregate's dead letters keep their order.
 */
export function buildDeadLetterMessage(input: DeadLetterInput): Message {
  const error = input.error.length > MAX_ERROR_LENGTH ? `${input.error.slice(0, MAX_ERROR_LENGTH)}…` : input.error;
  const body = {
    id: input.id,
    error,
    consumer_group: input.consumerGroup,
    original_topic: input.topic,
    original_partition: input.partition,
    original_offset: input.offset,
    attempts: input.attempts,
    event_type: input.eventType ?? null,
    aggregate_type: input.aggregateType ?? null,
    aggregate_id: input.aggregateId ?? null,
    failed_at: (input.failedAt ?? new Date()).toISOString(),
  };
  const headers: Record<string, string> = {
    error: error.length > 500 ? `${error.slice(0, 500)}…` : error,
    consumer_group: input.consumerGroup,
    original_topic: input.topic,
    original_partition: String(input.partition),
    original_offset: input.offset,
  };
  if (input.id !== null) headers.id = input.id;
  return { key: input.key ?? input.id ?? `${input.topic}-${input.partition}-${input.offset}`, value: JSON.stringify(body), headers };
}
