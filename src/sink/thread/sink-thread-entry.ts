import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../../shared/create-logger.js';
import { serveSink } from './serve-sink.js';
import { createKafkaSink, type SinkSettings } from '../create-sink.js';

/**
 * The sink thread's entry module (--sink-thread worker): builds the sink the
 * main thread would have built, on this thread, and serves it to the main
 * thread's WorkerSink. Loaded by URL (create-sink.ts names it), never imported.
 */
const port = parentPort;
if (!port) throw new Error('sink-thread-entry.ts runs as a worker thread only');
const { settings } = workerData as { settings: SinkSettings };
const logger = createLogger(settings.logLevel).child({ thread: 'sink' });
serveSink(port, createKafkaSink({ ...settings, sinkThread: 'main' }, logger));
