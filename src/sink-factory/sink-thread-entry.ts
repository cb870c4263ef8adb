import { parentPort, workerData } from 'node:worker_threads';
import type { RelayConfig } from '../config/config-schema.js';
import { createLogger } from '../logging/create-logger.js';
import { serveSink } from '../sink-thread/serve-sink.js';
import { createKafkaSink } from './create-sink.js';

/**
 * The sink thread's entry module (--sink-thread worker): builds the sink the
 * main thread would have built, on this thread, and serves it to the main
 * thread's WorkerSink. Loaded by URL (create-sink.ts names it), never imported.
 */
const port = parentPort;
if (!port) throw new Error('sink-thread-entry.ts runs as a worker thread only');
const { config } = workerData as { config: RelayConfig };
const logger = createLogger(config.logLevel).child({ thread: 'sink' });
serveSink(port, createKafkaSink({ ...config, sinkThread: 'main' }, logger));
