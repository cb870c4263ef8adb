import { OutboxTailError } from '../../shared/outbox-tail-error.js';

interface KafkaLikeError {
  name?: string;
  type?: string;
  message?: string;
  retriable?: boolean;
  cause?: unknown;
  originalError?: unknown;
}

function chain(error: unknown): KafkaLikeError[] {
  const out: KafkaLikeError[] = [];
  let current: unknown = error;
  while (current && typeof current === 'object' && out.length < 10) {
    out.push(current as KafkaLikeError);
    const next = (current as KafkaLikeError).cause ?? (current as KafkaLikeError).originalError;
    if (next === current) break;
    current = next;
  }
  return out;
}

/** Classifies a kafkajs error where it enters, by error type, never by message text. */
export function classifyKafkaError(error: unknown, context: string): OutboxTailError {
  if (OutboxTailError.is(error)) return error;
  const errors = chain(error);
  const detail = `${context}: ${errors.map((e) => `${e.name ?? 'Error'}${e.type ? ` ${e.type}` : ''}: ${e.message ?? ''}`).join(' <- ')}`;
  const types = new Set(errors.map((e) => e.type).filter(Boolean));
  const names = new Set(errors.map((e) => e.name).filter(Boolean));
  if (types.has('MESSAGE_TOO_LARGE') || types.has('RECORD_LIST_TOO_LARGE')) {
    return new OutboxTailError('MESSAGE_TOO_LARGE', detail, {
      hint: "the record exceeds the broker's max.message.bytes (or the topic's); raise it or use --on-oversize=dead-letter",
      cause: error,
    });
  }
  if (names.has('KafkaJSSASLAuthenticationError') || types.has('SASL_AUTHENTICATION_FAILED')) {
    return new OutboxTailError('KAFKA_AUTH_FAILED', detail, {
      hint: 'check the SASL mechanism, user and password for Kafka',
      cause: error,
    });
  }
  if (
    names.has('KafkaJSConnectionError') ||
    names.has('KafkaJSConnectionClosedError') ||
    names.has('KafkaJSBrokerNotFound') ||
    names.has('KafkaJSRequestTimeoutError')
  ) {
    return new OutboxTailError('KAFKA_UNREACHABLE', detail, {
      retriable: true,
      hint: 'check --brokers and that the Kafka brokers are up and reachable',
      cause: error,
    });
  }
  // Everything else (leader changes, UNKNOWN_PRODUCER_ID, OUT_OF_ORDER_SEQUENCE_NUMBER, ...)
  // is handled the same way: recreate the producer and replay from the slot.
  return new OutboxTailError('KAFKA_ERROR', detail, { retriable: true, cause: error });
}
