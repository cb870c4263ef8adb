import type { MessagePort } from 'node:worker_threads';
import { OutboxTailError } from '../../shared/outbox-tail-error.js';
import type { Watermark } from '../watermark.js';
import { isTransactional, type Sink } from '../sink.js';
import { unpackRecords } from './record-wire.js';
import type { SinkReply, SinkReplyError, SinkRequest } from './sink-thread-protocol.js';

function replyError(error: unknown): SinkReplyError {
  if (OutboxTailError.is(error)) {
    return {
      message: error.message,
      code: error.code,
      retriable: error.retriable,
      exitCode: error.exitCode,
      ...(error.hint !== undefined ? { hint: error.hint } : {}),
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

/**
 * The sink thread's side (--sink-thread worker): the Kafka client and its
 * record encoding run here, on the second core, while the main thread decodes
 * and assembles. Each request is answered when the sink settled it.
 */
export function serveSink(port: MessagePort, sink: Sink): void {
  /** The EndTxn of each seal, by the main thread's seal number, until its `committed` request takes it. */
  const sealedById = new Map<number, Promise<void>>();

  function handle(request: SinkRequest): Promise<Watermark | null | void> {
    switch (request.op) {
      case 'connect':
        return sink.connect();
      case 'send':
        return sink.send(unpackRecords(request.wire));
      case 'disconnect':
        return sink.disconnect();
      default:
        if (!isTransactional(sink)) return Promise.reject(new Error(`${request.op}: the sink thread's sink is not transactional`));
        if (request.op === 'readWatermark') return sink.readWatermark();
        if (request.op === 'commit') return sink.commit(request.position, unpackRecords(request.wire));
        if (request.op === 'seal') {
          return sink.seal(request.position, unpackRecords(request.wire)).then(({ committed }) => {
            committed.catch(() => undefined);
            sealedById.set(request.seal, committed);
          });
        }
        if (request.op === 'committed') {
          const committed = sealedById.get(request.seal);
          sealedById.delete(request.seal);
          return committed ?? Promise.reject(new Error(`committed: no sealed transaction numbered ${request.seal}`));
        }
        return sink.abort();
    }
  }

  port.on('message', (request: SinkRequest) => {
    handle(request).then(
      (value) => port.postMessage({ id: request.id, ok: true, ...(value !== undefined ? { value } : {}) } satisfies SinkReply),
      (error: unknown) => port.postMessage({ id: request.id, ok: false, error: replyError(error) } satisfies SinkReply),
    );
  });
}
