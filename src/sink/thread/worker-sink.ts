import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { type ErrorCode, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { packRecords } from './record-wire.js';
import type { Watermark } from '../watermark.js';
import type { ClusterMetadata, Sealed, Sink, TransactionalSink, WatermarkPosition } from '../sink.js';
import type { SinkRecord } from '../sink-record.js';
import type { SinkReply, SinkReplyError, SinkRequest } from './sink-thread-protocol.js';

interface Pending {
  resolve(value: Watermark | null | undefined): void;
  reject(error: Error): void;
}

/**
 * The worker thread to start: its entry module (which builds the real sink and
 * serves it, see serve-sink.ts) and the data it is built from. The entry is
 * named by whoever wires the sink, so this transport imports no sink factory.
 */
export interface SinkThreadStart {
  entry: URL;
  workerData: unknown;
}

/**
 * The compiled .js in dist starts as it is. Under tsx (the tests' broken relay
 * variants, the bench) the entry is the .ts source, loaded through tsx's API:
 * Node 20 does not run a parent's --import hooks in a worker.
 */
const startWorker = ({ entry, workerData }: SinkThreadStart): Worker =>
  entry.pathname.endsWith('.ts')
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`, { eval: true, workerData })
    : new Worker(entry, { workerData });

function rebuild(error: SinkReplyError): Error {
  if (error.code === undefined) return new Error(error.message);
  return new OutboxTailError(error.code as ErrorCode, error.message, {
    retriable: error.retriable ?? false,
    ...(error.hint !== undefined ? { hint: error.hint } : {}),
    ...(error.exitCode !== undefined ? { exitCode: error.exitCode } : {}),
  });
}

/**
 * A Sink whose Kafka client runs on a worker thread (--sink-thread worker).
 * send() resolves only when the worker's sink resolved, i.e. when Kafka
 * acknowledged; a worker that dies rejects everything pending (retriable: the
 * session ends and replays from the slot, as after any Kafka failure).
 * metadata() stays on this thread: it opens its own short-lived client anyway.
 */
export class WorkerSink implements Sink {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | null = null;

  constructor(
    private readonly thread: SinkThreadStart,
    private readonly local: Sink,
    private readonly logger: Logger,
  ) {}

  async connect(): Promise<void> {
    const worker = startWorker(this.thread);
    // The main thread's handles keep the process alive; a forgotten worker must not.
    worker.unref();
    worker.on('message', (reply: SinkReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.ok) p.resolve(reply.value);
      else p.reject(rebuild(reply.error));
    });
    worker.on('error', (error) => this.fail(`the sink thread failed: ${error.message}`));
    worker.on('exit', (code) => this.fail(`the sink thread exited (code ${code})`));
    this.worker = worker;
    this.dead = null;
    await this.request({ id: 0, op: 'connect' });
  }

  /** Exactly-once: the same sink, with the TransactionalSink calls carried to the worker too. */
  static transactional(thread: SinkThreadStart, local: Sink, logger: Logger): TransactionalSink {
    return new TransactionalWorkerSink(thread, local, logger);
  }

  send(records: readonly SinkRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    const wire = packRecords(records);
    return this.request({ id: 0, op: 'send', wire }, [wire]).then(() => undefined);
  }

  async disconnect(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.request({ id: 0, op: 'disconnect' }).catch(() => undefined);
    this.worker = null;
    await worker.terminate();
  }

  metadata(topics?: readonly string[]): Promise<ClusterMetadata> {
    return this.local.metadata(topics);
  }

  protected request(request: SinkRequest, transfer: ArrayBuffer[] = []): Promise<Watermark | null | undefined> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('WorkerSink used before connect'));
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<Watermark | null | undefined>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id }, transfer);
    });
  }

  private fail(reason: string): void {
    if (this.worker === null) return; // terminated by disconnect()
    const error = new OutboxTailError('KAFKA_ERROR', reason, { retriable: true, hint: 'the relay restarts the session and replays from the slot' });
    this.dead = error;
    if (this.pending.size > 0) this.logger.error({ err: error, pending: this.pending.size }, 'sink thread lost; unacknowledged batches will be replayed');
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

class TransactionalWorkerSink extends WorkerSink implements TransactionalSink {
  readonly transactional = true as const;
  /** Numbers the seals, so that a `committed` request names its `seal`. */
  private seals = 0;

  async readWatermark(): Promise<Watermark | null> {
    return (await this.request({ id: 0, op: 'readWatermark' })) ?? null;
  }

  async commit(position: WatermarkPosition, records: readonly SinkRecord[] = []): Promise<void> {
    const wire = packRecords(records);
    await this.request({ id: 0, op: 'commit', position, wire }, [wire]);
  }

  async seal(position: WatermarkPosition, records: readonly SinkRecord[] = []): Promise<Sealed> {
    const wire = packRecords(records);
    const seal = ++this.seals;
    await this.request({ id: 0, op: 'seal', seal, position, wire }, [wire]);
    const committed = this.request({ id: 0, op: 'committed', seal }).then(() => undefined);
    committed.catch(() => undefined);
    return { committed };
  }

  async abort(): Promise<void> {
    await this.request({ id: 0, op: 'abort' });
  }
}
