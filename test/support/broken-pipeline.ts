/**
 * A deliberately broken pipelined produce chain, for the negative control of
 * the pipelining's order claim (docs/architecture.md#pipelined-produce-chain):
 * every fourth request is written behind the next two, as a client does when
 * it resends a refused request with fresh sequence numbers after the ones sent
 * behind it (kafkajs rolls an idempotent producer's sequence numbers back on a
 * failure and hands them to the next queued request; @platformatic/kafka
 * re-inits the producer id on OUT_OF_ORDER_SEQUENCE_NUMBER and resends). The
 * frontier is untouched (each send still resolves only once its records are
 * in Kafka): only the order in Kafka breaks, and the order check must see it.
 */
import type { SinkFactory } from '../../src/sink/create-sink.js';
import { createKafkaSink } from '../../src/sink/create-sink.js';
import type { SinkRecord } from '../../src/sink/sink-record.js';
import type { ClusterMetadata, Sink } from '../../src/sink/sink.js';

/** How many later requests a held one waits for, and how long at most (a quiet outbox sends no more). */
const BEHIND = 2;
const HOLD_MAX_MS = 1_000;

class ResendBehindSink implements Sink {
  private sends = 0;
  private held: { count: number; release: () => void } | null = null;

  constructor(private readonly inner: Sink) {}

  get maxInFlightRequests(): number {
    return this.inner.maxInFlightRequests ?? 1;
  }

  connect(): Promise<void> {
    return this.inner.connect();
  }

  async send(records: readonly SinkRecord[]): Promise<void> {
    const n = this.sends++;
    if (n % 4 === 1 && !this.held) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => release(), HOLD_MAX_MS);
        const release = () => {
          clearTimeout(timer);
          this.held = null;
          resolve();
        };
        this.held = { count: 0, release };
      });
      return this.inner.send(records);
    }
    const held = this.held;
    await this.inner.send(records);
    if (held && this.held === held && ++held.count >= BEHIND) held.release();
  }

  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }

  metadata(topics?: readonly string[]): Promise<ClusterMetadata> {
    return this.inner.metadata(topics);
  }
}

/**
 * A sink wrapper written member by member that forgot maxInFlightRequests: what
 * the tracing sink was before the decorator mechanism (with tracing on,
 * --max-in-flight-requests was silently 1). Nothing is lost; only the depth is.
 */
function forgetsInFlight(inner: Sink): Sink {
  return {
    connect: () => inner.connect(),
    disconnect: () => inner.disconnect(),
    metadata: (topics?: readonly string[]) => inner.metadata(topics),
    send: (records: readonly SinkRecord[]) => inner.send(records),
  };
}

export const PIPELINE_VARIANTS: Record<string, { sinkFactory: SinkFactory }> = {
  'pipeline-resend-behind': { sinkFactory: (settings, logger) => new ResendBehindSink(createKafkaSink(settings, logger)) },
  'wrapper-forgets-in-flight': { sinkFactory: (settings, logger) => forgetsInFlight(createKafkaSink(settings, logger)) },
};
