import { parentPort, workerData } from 'node:worker_threads';
import type { RelayConfig } from '../config/config-schema.js';
import { OutboxTailError } from '../errors/outbox-tail-error.js';
import { createLogger } from '../logging/create-logger.js';
import { createKafkaSink } from './create-sink.js';
import { unpackRecords } from './record-wire.js';

/**
 * The sink thread (--sink-thread worker): the Kafka client and its record
 * encoding run here, on the second core, while the main thread decodes and
 * assembles. Requests are handled in arrival order, exactly as the main
 * thread would call the sink, so ordering and acknowledgement stay the
 * sink's (docs/architecture.md#the-sink-thread).
 */
export type SinkRequest = { id: number; op: 'connect' } | { id: number; op: 'send'; wire: ArrayBuffer } | { id: number; op: 'disconnect' };

export interface SinkReplyError {
  message: string;
  code?: string;
  retriable?: boolean;
  hint?: string;
  exitCode?: number;
}
export type SinkReply = { id: number; ok: true } | { id: number; ok: false; error: SinkReplyError };

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

port.on('message', (request: SinkRequest) => {
  const done = request.op === 'connect' ? sink.connect() : request.op === 'send' ? sink.send(unpackRecords(request.wire)) : sink.disconnect();
  done.then(
    () => port.postMessage({ id: request.id, ok: true } satisfies SinkReply),
    (error: unknown) => port.postMessage({ id: request.id, ok: false, error: replyError(error) } satisfies SinkReply),
  );
});
