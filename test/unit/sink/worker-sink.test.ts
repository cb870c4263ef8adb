import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { createLogger } from '../../../src/shared/create-logger.js';
import { sinkThread } from '../../../src/sink/create-sink.js';
import { WorkerSink } from '../../../src/sink/thread/worker-sink.js';

// Port 1 on loopback refuses at once: no broker is needed to see what crosses back from the sink thread.
const unreachable = resolveConfig({ flags: { brokers: ['127.0.0.1:1'], connectTimeoutMs: 500, kafkaRetries: 0, logLevel: 'silent' } });

describe('WorkerSink (the Kafka client on a worker thread)', () => {
  it('rejects connect with the error the worker classified: same code and retriable flag', async () => {
    const sink = new WorkerSink(sinkThread(unreachable), null as never, createLogger('silent'));
    const error = await sink.connect().then(
      () => null,
      (e: unknown) => e,
    );
    await sink.disconnect();
    expect(error).toBeInstanceOf(OutboxTailError);
    expect(error).toMatchObject({ code: 'KAFKA_UNREACHABLE', retriable: true });
    expect((error as Error).message).toContain('ECONNREFUSED 127.0.0.1:1');
  });

  it('refuses to send before connect, and a disconnected sink sends nothing', async () => {
    const sink = new WorkerSink(sinkThread(unreachable), null as never, createLogger('silent'));
    await expect(sink.send([{ topic: 't', key: 'k', value: Buffer.from('{}'), headers: {}, bytes: 10 }])).rejects.toThrow(/before connect/);
    await sink.disconnect();
  });
});
