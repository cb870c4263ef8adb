import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RelayVariant } from './broken-checkpointers.js';
import { followChildLog, type ChildExit } from '../../dev/support/child-log.js';
import { peakRssMb } from '../../dev/support/proc-stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = `${ROOT}bin/outbox-tail.js`;

export interface LogLine {
  level: string;
  msg: string;
  event?: string;
  code?: string;
  [key: string]: unknown;
}

export interface RelayProcess {
  child: ChildProcess;
  pid: number;
  logs: LogLine[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Peak resident set size so far, in MB (VmHWM). */
  peakRssMb(): number;
}

export interface StartRelayOptions {
  databaseUrl: string;
  brokers: string[];
  slot: string;
  /** Extra OUTBOX_TAIL_* settings; the relay is configured through env like a container would be. */
  env?: Record<string, string>;
  args?: string[];
  /** Run a test-only checkpointer variant instead of bin/outbox-tail.js. */
  variant?: RelayVariant;
  /** The node binary to run it with (default: this process's), to compare runtimes. */
  node?: string;
}

/** Starts the real daemon (bin/outbox-tail.js, compiled) as a child process. */
export function startRelay(options: StartRelayOptions): RelayProcess {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    OUTBOX_TAIL_SLOT: options.slot,
    OUTBOX_TAIL_DATABASE_URL: options.databaseUrl,
    OUTBOX_TAIL_BROKERS: options.brokers.join(','),
    OUTBOX_TAIL_STATUS_INTERVAL_MS: '100',
    OUTBOX_TAIL_RESTART_BACKOFF_INITIAL_MS: '100',
    OUTBOX_TAIL_RESTART_BACKOFF_MAX_MS: '1000',
    OUTBOX_TAIL_STANDBY_RETRY_MS: '200',
    OUTBOX_TAIL_LOG_LEVEL: 'info',
    // Several relays run at once in tests: an ephemeral metrics port each.
    OUTBOX_TAIL_METRICS_LISTEN: '127.0.0.1:0',
    // Run the same suites against the other Kafka client: OUTBOX_TAIL_KAFKA_CLIENT=platformatic npx vitest ...
    ...(process.env.OUTBOX_TAIL_KAFKA_CLIENT ? { OUTBOX_TAIL_KAFKA_CLIENT: process.env.OUTBOX_TAIL_KAFKA_CLIENT } : {}),
    // ... and with the Kafka client on its worker thread: OUTBOX_TAIL_SINK_THREAD=worker npx vitest ...
    ...(process.env.OUTBOX_TAIL_SINK_THREAD ? { OUTBOX_TAIL_SINK_THREAD: process.env.OUTBOX_TAIL_SINK_THREAD } : {}),
    // ... and with the produce chain pipelined: OUTBOX_TAIL_KAFKA_CLIENT=platformatic OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS=5 npx vitest ...
    ...(process.env.OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS ? { OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS: process.env.OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS } : {}),
    // ... and with every batch compressed: OUTBOX_TAIL_COMPRESSION=zstd npx vitest ...
    ...(process.env.OUTBOX_TAIL_COMPRESSION ? { OUTBOX_TAIL_COMPRESSION: process.env.OUTBOX_TAIL_COMPRESSION } : {}),
    ...options.env,
  };
  const [command, args] = options.variant
    ? // `node --import tsx` keeps it one process, so SIGKILL reaches the relay itself.
      [options.node ?? process.execPath, ['--import', 'tsx', `${ROOT}test/support/relay-variant.ts`, options.variant, ...(options.args ?? [])]]
    : [options.node ?? process.execPath, [BIN, ...(options.args ?? [])]];
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const log = followChildLog<LogLine>(child, exited, 'relay', (text) => ({ level: 'raw', msg: text }));
  let peak = 0;
  const pid = child.pid!;
  const readPeak = () => (peak = Math.max(peak, peakRssMb(pid) ?? 0));
  // VmHWM is a high-water mark: sampling keeps the last value once the process is gone.
  const sampler = setInterval(readPeak, 100);
  void exited.then(() => clearInterval(sampler));
  return {
    child,
    pid,
    logs: log.lines,
    stderr: log.stderr,
    exited,
    waitForLog: (predicate, timeoutMs = 30_000) => log.waitFor(predicate, timeoutMs),
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
    peakRssMb: readPeak,
  };
}

export const isStreaming = (l: LogLine) => l.event === 'streaming';
