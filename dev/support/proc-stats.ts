/**
 * Process and machine figures from /proc (Linux): peak RSS, CPU time, and
 * CPU windows that split a run's CPU between the relay, the walsender decoding
 * for it, the Kafka broker and the rest of the machine (the bench shows with
 * them where a catch-up's CPU goes; on a 2-core box running all of them,
 * their sum is the ceiling the relay's throughput is compared with).
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Linux's USER_HZ: /proc reports CPU time in these ticks (100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;

/** Peak resident set size of a process so far (VmHWM), in MB, or null when it is gone. */
export function peakRssMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds of a process so far, or null when it is gone or not ours to read. */
export function processCpuSeconds(pid: number | undefined | null, thread?: number): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), from the first line of /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

export interface CpuWindow {
  /** Seconds of wall time between the two samples. */
  seconds: number;
  /** CPU microseconds per event, per process (null where the pid was unknown, e.g. remote servers). */
  us_per_event: { relay: number | null; walsender: number | null; broker: number | null; other: number | null };
  /** The relay's main (JavaScript) thread alone, inside `relay`: the rest is its sink thread, GC and libuv threads. */
  relay_main_thread_us_per_event: number | null;
  /** Average busy cores of the whole machine in the window, and how many it has. */
  machine_busy_cores: number | null;
  cores: number;
}

interface Sample {
  at: number;
  relay: number | null;
  relayMain: number | null;
  walsender: number | null;
  broker: number | null;
  machine: { busy: number; total: number } | null;
}

/** Starts a window over the given processes; call the returned function when the work is done. */
export function cpuWindow(pids: { relay?: number | null; walsender?: number | null; broker?: number | null }): (events: number) => CpuWindow {
  const sample = (): Sample => ({
    at: performance.now(),
    relay: processCpuSeconds(pids.relay),
    // The main thread's task id is the process id.
    relayMain: processCpuSeconds(pids.relay, pids.relay ?? undefined),
    walsender: processCpuSeconds(pids.walsender),
    broker: processCpuSeconds(pids.broker),
    machine: machineCpuSeconds(),
  });
  const start = sample();
  return (events) => {
    const end = sample();
    const per = (a: number | null, b: number | null) => (a === null || b === null || events <= 0 ? null : Math.round((((b - a) * 1e6) / events) * 10) / 10);
    const relay = per(start.relay, end.relay);
    const walsender = per(start.walsender, end.walsender);
    const broker = per(start.broker, end.broker);
    const machine = start.machine && end.machine ? per(start.machine.busy, end.machine.busy) : null;
    const other =
      machine === null || relay === null || walsender === null || broker === null ? null : Math.round((machine - relay - walsender - broker) * 10) / 10;
    const seconds = (end.at - start.at) / 1000;
    const busyCores = start.machine && end.machine && seconds > 0 ? Math.round(((end.machine.busy - start.machine.busy) / seconds) * 100) / 100 : null;
    return {
      seconds: Math.round(seconds * 100) / 100,
      us_per_event: { relay, walsender, broker, other },
      relay_main_thread_us_per_event: per(start.relayMain, end.relayMain),
      machine_busy_cores: busyCores,
      cores: cpus().length,
    };
  };
}
