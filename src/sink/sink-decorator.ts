import type { SinkRecord } from './sink-record.js';
import type { SinkFactory } from './create-sink.js';
import { isTransactional, type Sealed, type Sink, type WatermarkPosition } from './sink.js';

/**
 * What a decorator adds around the publishing calls of a sink (metrics,
 * tracing). Each hook gets the records of the call and `next`, the call on the
 * sink below; it returns what `next` returned (or its rejection). A hook left
 * out passes the call through untouched.
 */
export interface SinkDecorator {
  send?(records: readonly SinkRecord[], next: () => Promise<void>): Promise<void>;
  /** Exactly-once: the Kafka transaction's last batch and the watermark, then EndTxn. */
  commit?(records: readonly SinkRecord[], position: WatermarkPosition, next: () => Promise<void>): Promise<void>;
  /** Exactly-once: resolves once the last batch and the watermark are acknowledged; EndTxn's outcome is `committed`. */
  seal?(records: readonly SinkRecord[], position: WatermarkPosition, next: () => Promise<Sealed>): Promise<Sealed>;
}

/**
 * The sink below, with the decorator's hooks around send, commit and seal, and
 * every other member (connect, metadata, maxInFlightRequests, transactional,
 * readWatermark, abort, and any member added to the contract later) read from
 * the sink below at the moment it is used. Written once so no wrapper can drop
 * a member: a hand-written wrapper once lost maxInFlightRequests, so
 * --max-in-flight-requests was silently 1 with tracing on.
 */
export function decorateSink(sink: Sink, decorator: SinkDecorator): Sink {
  const hooks: Partial<Record<PropertyKey, unknown>> = {};
  if (decorator.send) {
    const send = decorator.send.bind(decorator);
    hooks.send = (records: readonly SinkRecord[]) => send(records, () => sink.send(records));
  }
  if (isTransactional(sink)) {
    if (decorator.commit) {
      const commit = decorator.commit.bind(decorator);
      hooks.commit = (position: WatermarkPosition, records: readonly SinkRecord[] = []) => commit(records, position, () => sink.commit(position, records));
    }
    if (decorator.seal) {
      const seal = decorator.seal.bind(decorator);
      hooks.seal = (position: WatermarkPosition, records: readonly SinkRecord[] = []) => seal(records, position, () => sink.seal(position, records));
    }
  }
  return new Proxy(sink, {
    get(target, property) {
      if (Object.hasOwn(hooks, property)) return hooks[property];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The factory whose every sink is decorated by `decorator(sink)` (one decorator per sink: a session's sink is new after each failure). */
export function decorateSinkFactory(inner: SinkFactory, decorator: (sink: Sink) => SinkDecorator): SinkFactory {
  return (settings, logger) => {
    const sink = inner(settings, logger);
    return decorateSink(sink, decorator(sink));
  };
}
