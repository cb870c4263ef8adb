/**
 * The fake sinks of the unit tests and the bench, one set: each acknowledges
 * at once unless an override says otherwise. A test replaces only the members
 * its claim is about (a send that fails, a seal whose EndTxn is held).
 */
import type { SinkRecord } from '../../src/sink/sink-record.js';
import type { Sink, TransactionalSink } from '../../src/sink/sink.js';

/** A sink that acknowledges every send at once and keeps each batch it was given, in order; `overrides` replace its members. */
export function fakeSink(overrides: Partial<Sink> = {}): Sink & { readonly sent: SinkRecord[][] } {
  const sent: SinkRecord[][] = [];
  return {
    sent,
    connect: async () => undefined,
    disconnect: async () => undefined,
    metadata: async () => ({ brokers: 1, topics: new Map() }),
    send: async (records) => void sent.push([...records]),
    ...overrides,
  };
}

/** A transactional sink that accepts everything at once (no watermark yet); `overrides` replace its members. */
export function fakeTransactionalSink(overrides: Partial<TransactionalSink> = {}): TransactionalSink & { readonly sent: SinkRecord[][] } {
  const sent: SinkRecord[][] = [];
  return {
    sent,
    transactional: true,
    connect: async () => undefined,
    disconnect: async () => undefined,
    metadata: async () => ({ brokers: 1, topics: new Map() }),
    send: async (records) => void sent.push([...records]),
    readWatermark: async () => null,
    commit: async () => undefined,
    seal: async () => ({ committed: Promise.resolve() }),
    abort: async () => undefined,
    ...overrides,
  };
}
