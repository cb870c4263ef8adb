import { parentPort, workerData } from 'node:worker_threads';
import type { RelayConfig } from '../config/config-schema.js';
import { OutboxTailError } from '../errors/outbox-tail-error.js';
import { createLogger } from '../logging/create-logger.js';
import { createKafkaSink } from './create-sink.js';
import { unpackRecords } from './record-wire.js';
import { isTransactional, type WatermarkPosition } from './sink.js';
import type { Watermark } from '../exactly-once/watermark.js';

/**
 * The sink thread (--sink-thread worker): the Kafka client and its record
 * encoding run here, on the second core, while the main thread decodes and
 * assembles. Requests are handled in arrival order, exactly as the main
 * thread would call the sink, so ordering and acknowledgement stay the
 * sink's (docs/architecture.md#the-sink-thread).
 */
export type SinkRequest =
  | { id: number; op: 'connect' }
  | { id: number; op: 'send'; wire: ArrayBuffer }
  | { id: number; op: 'disconnect' }
  // Exactly-once (TransactionalSink): the watermark crosses as a plain object, its LSNs as bigints.
  | { id: number; op: 'readWatermark' }
  | { id: number; op: 'commit'; position: WatermarkPosition; wire: ArrayBuffer }
  // seal() crosses as two requests: `seal` answers once sealed, `committed` (sent right after) once its EndTxn did.
  | { id: number; op: 'seal'; seal: number; position: WatermarkPosition; wire: ArrayBuffer }
  | { id: number; op: 'committed'; seal: number }
  | { id: number; op: 'abort' };

export interface SinkReplyError {
  message: string;
  code?: string;
  retriable?: boolean;
  hint?: string;
  exitCode?: number;
}
export type SinkReply = { id: number; ok: true; value?: Watermark | null } | { id: number; ok: false; error: SinkReplyError };

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

const port = parentPort;
if (!port) throw new Error('sink-thread.ts runs as a worker thread only');
const { config } = workerData as { config: RelayConfig };
const logger = createLogger(config.logLevel).child({ thread: 'sink' });
const sink = createKafkaSink({ ...config, sinkThread: 'main' }, logger);
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
