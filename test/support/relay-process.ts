import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RelayVariant } from './broken-checkpointers.js';

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
    ...options.env,
  };
  const [command, args] = options.variant
    ? // `node --import tsx` keeps it one process, so SIGKILL reaches the relay itself.
      [process.execPath, ['--import', 'tsx', `${ROOT}test/support/relay-variant.ts`, options.variant, ...(options.args ?? [])]]
    : [process.execPath, [BIN, ...(options.args ?? [])]];
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogLine[] = [];
  let stderr = '';
  const waiters: Array<{ predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { level: 'raw', msg: text };
      }
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.predicate(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let peak = 0;
  const pid = child.pid!;
  const sampler = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      /* exited */
    }
  }, 100);
  void exited.then(() => clearInterval(sampler));
  return {
    child,
    pid,
    logs,
    stderr: () => stderr,
    exited,
    waitForLog(predicate, timeoutMs = 30_000) {
      const found = logs.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`relay log line not seen within ${timeoutMs} ms; last lines:\n${logs.slice(-8).map((l) => JSON.stringify(l)).join('\n')}\nstderr: ${stderr.slice(-2000)}`));
        }, timeoutMs);
        const onExit = exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(new Error(`relay exited (code ${code}, signal ${signal}) before the expected log line; last lines:\n${logs.slice(-8).map((l) => JSON.stringify(l)).join('\n')}\nstderr: ${stderr.slice(-2000)}`));
        });
        void onExit;
        waiters.push({
          predicate,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
    peakRssMb: () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      } catch {
        /* exited: keep the last sample */
      }
      return peak;
    },
  };
}

export const isStreaming = (l: LogLine) => l.event === 'streaming';
