import * as api from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RelayStats } from '../../../src/pipeline/relay-stats.js';
import { createRelayMetrics } from '../../../src/observability/relay-metrics.js';
import { tracingDecorator } from '../../../src/observability/tracing/tracing-decorator.js';
import { decorateSink } from '../../../src/sink/sink-decorator.js';
import type { SinkRecord } from '../../../src/sink/sink-record.js';
import { isTransactional, type Sink, type TransactionalSink } from '../../../src/sink/sink.js';
import { Lsn } from '../../../src/shared/lsn.js';
import { fakeSink } from '../../support/fake-sinks.js';

const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new InMemorySpanExporter() })] }).getTracer('relay');
const metrics = () => createRelayMetrics(new Registry(), new RelayStats());
type Wrap = (sink: Sink) => Sink;
const withMetrics: Wrap = (sink) => metrics().instrumentSink(sink);
const withTracing: Wrap = (sink) => decorateSink(sink, tracingDecorator(api, tracer));

const record: SinkRecord = { topic: 't', key: 'k', value: Buffer.from('{}'), headers: { id: '1' }, bytes: 2 };
const position = { lsn: Lsn.of(16n), commitLsn: Lsn.of(16n), commitTime: '2026-12-07T00:00:00Z', count: 1 };

/** A transactional sink with every member of the contract (and one more, a member added later), each answering something of its own. */
function innerSink(): TransactionalSink & { calls: string[]; futureMember: string } {
  const calls: string[] = [];
  const sealed = { committed: Promise.resolve() };
  return {
    calls,
    futureMember: 'passes through',
    transactional: true,
    maxInFlightRequests: 3,
    connect: async () => void calls.push('connect'),
    disconnect: async () => void calls.push('disconnect'),
    metadata: async (topics) => (calls.push(`metadata ${topics?.join()}`), { brokers: 3, topics: new Map([['t', 6]]) }),
    send: async (records) => void calls.push(`send ${records.length}`),
    readWatermark: async () => (calls.push('readWatermark'), null),
    commit: async (_position, records = []) => void calls.push(`commit ${records.length}`),
    seal: async (_position, records = []) => (calls.push(`seal ${records.length}`), sealed),
    abort: async () => void calls.push('abort'),
  };
}

/** What differs between a sink and the same sink seen through `wrap`: the members lost or changed on the way. */
async function notPassedThrough(wrap: Wrap): Promise<string[]> {
  const inner = innerSink();
  const outer = wrap(inner) as TransactionalSink & { futureMember?: string };
  const lost: string[] = [];
  if (outer.maxInFlightRequests !== inner.maxInFlightRequests) lost.push('maxInFlightRequests');
  if (!isTransactional(outer)) lost.push('transactional');
  if (outer.futureMember !== inner.futureMember) lost.push('futureMember');
  const expectCall = async (name: string, call: () => Promise<unknown>, expected: string) => {
    const before = inner.calls.length;
    try {
      await call();
    } catch {
      lost.push(name);
      return;
    }
    if (inner.calls.slice(before).join() !== expected) lost.push(name);
  };
  await expectCall('connect', () => outer.connect(), 'connect');
  await expectCall('metadata', () => outer.metadata(['t']), 'metadata t');
  await expectCall('send', () => outer.send([record, record]), 'send 2');
  if (isTransactional(outer)) {
    await expectCall('readWatermark', () => outer.readWatermark(), 'readWatermark');
    await expectCall('commit', () => outer.commit(position, [record]), 'commit 1');
    await expectCall('seal', () => outer.seal(position, [record]), 'seal 1');
    await expectCall('abort', () => outer.abort(), 'abort');
  }
  await expectCall('disconnect', () => outer.disconnect(), 'disconnect');
  return lost;
}

describe('sink decorators (metrics, tracing)', () => {
  it.each([
    ['metrics', [withMetrics]],
    ['tracing', [withTracing]],
    ['tracing over metrics (the relay with --otel tracing)', [withMetrics, withTracing]],
    ['metrics over tracing (the relay with --otel tracing)', [withTracing, withMetrics]],
    ['metrics over tracing over metrics', [withMetrics, withTracing, withMetrics]],
  ] as const)('pass every member of the sink through: %s', async (_name, wraps) => {
    const stack: Wrap = (sink) => wraps.reduce((s, wrap) => wrap(s), sink);
    expect(await notPassedThrough(stack)).toEqual([]);
  });

  it('negative control: a wrapper that lists the members by hand loses the one it forgot, and the check says which', async () => {
    // The tracing sink before the decorator mechanism: every member but maxInFlightRequests.
    const handWritten: Wrap = (sink) => {
      const t = sink as TransactionalSink;
      const wrapped: TransactionalSink = {
        transactional: true,
        connect: () => t.connect(),
        disconnect: () => t.disconnect(),
        metadata: (topics) => t.metadata(topics),
        send: (records) => t.send(records),
        readWatermark: () => t.readWatermark(),
        commit: (p, records) => t.commit(p, records),
        seal: (p, records) => t.seal(p, records),
        abort: () => t.abort(),
      };
      return wrapped;
    };
    expect(await notPassedThrough(handWritten)).toEqual(['maxInFlightRequests', 'futureMember']);
  });

  it('leaves an at-least-once sink at-least-once: no commit, seal or abort appears', () => {
    const outer = withTracing(withMetrics(fakeSink()));
    expect(isTransactional(outer)).toBe(false);
    expect('commit' in outer || 'seal' in outer).toBe(false);
    expect(outer.maxInFlightRequests).toBeUndefined();
  });

  it('rejects as the sink below rejected, through every decorator', async () => {
    const failing = fakeSink({
      send: async () => {
        throw Object.assign(new Error('broker down'), { code: 'KAFKA_ERROR' });
      },
    });
    await expect(
      withTracing(withMetrics(failing)).send([{ ...record, headers: { id: '1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } }]),
    ).rejects.toMatchObject({
      code: 'KAFKA_ERROR',
    });
  });
});
