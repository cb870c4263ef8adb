/**
 * Child processes of the benchmark: the real relay (bin/outbox-tail.js), the
 * null-sink relay and the bench's own helpers (Kafka limit, polling
 * publisher), each with its peak RSS read from /proc (VmHWM).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { followChildLog, type ChildExit } from '../support/child-log.js';
import { peakRssMb, processCpuSeconds } from '../support/proc-stats.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RELAY_BIN = `${ROOT}bin/outbox-tail.js`;

export interface LogLine {
  level?: number | string;
  msg?: string;
  event?: string;
  [key: string]: unknown;
}

export interface BenchProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  startedAt: number;
  logs: LogLine[];
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Peak resident set size so far (VmHWM), in MB; the last value read once the process is gone. */
  peakRssMb(): number;
  /** CPU time (user + system) used so far, in seconds; the last value read once the process is gone. */
  cpuSeconds(): number;
  /** Resident set size (VmRSS) every 250 ms since spawn: [seconds since spawn, MB], for RSS-over-time charts. */
  rssSeries(): Array<[number, number]>;
  /** SIGTERM (graceful drain), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** Node flags before the script, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/p']. */
  nodeArgs?: string[];
  script: string;
  args?: string[];
  env: Record<string, string>;
  /** The node binary (default: this process's), to compare runtimes. */
  node?: string;
}

/** Spawns `node [nodeArgs] script [args]`; stdout is parsed as JSON lines (pino or the helpers' own). */
export function spawnNode(options: SpawnOptions): BenchProcess {
  return spawnProcess({
    name: options.name,
    command: options.node ?? process.execPath,
    args: [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])],
    env: options.env,
  });
}

/**
 * Spawns any program as a bench process (the same log, RSS and CPU
 * bookkeeping as the relays): Debezium Server's JVM for --compare debezium.
 * Its stdout lines that are not JSON become `{ msg: line }`.
 */
export function spawnProcess(options: { name: string; command: string; args: string[]; env: Record<string, string>; cwd?: string }): BenchProcess {
  const child = spawn(options.command, options.args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const startedAt = performance.now();
  const pid = child.pid!;
  const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const log = followChildLog<LogLine>(child, exited, options.name, (text) => ({ msg: text }));
  let peak = 0;
  const readPeak = () => (peak = Math.max(peak, peakRssMb(pid) ?? 0));
  let cpu = 0;
  const readCpu = () => (cpu = processCpuSeconds(pid) ?? cpu);
  const rss: Array<[number, number]> = [];
  const readRss = () => {
    const mb = rssMb(pid);
    if (mb !== null) rss.push([Math.round(performance.now() - startedAt) / 1000, Math.round(mb * 10) / 10]);
  };
  // VmHWM is a high-water mark, so sparse reads suffice; the last read before exit keeps it.
  const sampler = setInterval(() => {
    readPeak();
    readCpu();
    readRss();
  }, 250);
  void exited.then(() => clearInterval(sampler));
  return {
    name: options.name,
    child,
    pid,
    startedAt,
    logs: log.lines,
    stderr: log.stderr,
    exited,
    waitForLog: (predicate, timeoutMs = 60_000) => log.waitFor(predicate, timeoutMs),
    peakRssMb: readPeak,
    cpuSeconds: readCpu,
    rssSeries: () => rss,
    async stop(graceMs = 20_000) {
      readPeak();
      readCpu();
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Current resident set size (VmRSS) of a process in MB, or null when it is gone. */
function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Environment for a relay process: configured through OUTBOX_TAIL_* like a container. */
export function relayEnv(options: { databaseUrl: string; brokers: string[]; slot: string; extra?: Record<string, string> }): Record<string, string> {
  return {
    OUTBOX_TAIL_SLOT: options.slot,
    OUTBOX_TAIL_DATABASE_URL: options.databaseUrl,
    OUTBOX_TAIL_BROKERS: options.brokers.join(','),
    // Confirm every 100 ms so "confirmed_flush_lsn reached the end" is seen promptly.
    OUTBOX_TAIL_STATUS_INTERVAL_MS: '100',
    OUTBOX_TAIL_METRICS_LISTEN: '127.0.0.1:0',
    OUTBOX_TAIL_LOG_LEVEL: 'info',
    ...options.extra,
  };
}

export const isStreaming = (l: LogLine) => l.event === 'streaming';
