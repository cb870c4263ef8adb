import type { Watermark } from '../watermark.js';
import type { WatermarkPosition } from '../sink.js';

/**
 * What crosses between the main thread's WorkerSink and the sink thread
 * (--sink-thread worker). Requests are handled in arrival order, exactly as
 * the main thread would call the sink, so ordering and acknowledgement stay
 * the sink's (docs/architecture.md#the-sink-thread).
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
