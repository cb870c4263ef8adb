/**
 * Process helpers for the native stack: running commands, free ports, process
 * groups, waiting for processes to disappear, and making sure nothing we
 * started outlives the Node process that started it.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { open, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs a command to completion, capturing stdout and stderr together. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; uid?: number; gid?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const spawnOptions: SpawnOptions = { stdio: ['ignore', 'pipe', 'pipe'] };
    if (options.cwd !== undefined) spawnOptions.cwd = options.cwd;
    if (options.env !== undefined) spawnOptions.env = options.env;
    if (options.uid !== undefined) spawnOptions.uid = options.uid;
    if (options.gid !== undefined) spawnOptions.gid = options.gid;
    const child = spawn(command, args, spawnOptions);
    const chunks: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => chunks.push(c));
    child.stderr?.on('data', (c: Buffer) => chunks.push(c));
    let timer: NodeJS.Timeout | undefined;
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (timer) clearTimeout(timer);
      if (err.code === 'ENOENT') reject(new Error(`command not found: ${command}`));
      else reject(err);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** A free TCP port on 127.0.0.1 (bind port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not determine a free port'));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** /proc/<pid>/stat fields we need; undefined when the process does not exist. */
function procStat(pid: number): { state: string; ppid: number; pgid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '?', ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

const hasProc = (() => {
  try {
    readdirSync('/proc/self');
    return true;
  } catch {
    return false;
  }
})();

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  if (hasProc) {
    const s = procStat(pid);
    return s !== undefined && s.state !== 'Z' && s.state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Live (non-zombie) members of a process group. */
export function processGroupMembers(pgid: number): number[] {
  if (!hasProc) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const s = procStat(pid);
    if (s && s.pgid === pgid && s.state !== 'Z' && s.state !== 'X') members.push(pid);
  }
  return members;
}

/** Live direct children of a process (Linux /proc; empty elsewhere). */
export function childrenOf(pid: number): number[] {
  if (!hasProc) return [];
  const kids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    if (s && s.ppid === pid && s.state !== 'Z' && s.state !== 'X') kids.push(Number(name));
  }
  return kids;
}

/** Waits until none of the pids is alive; false on timeout. */
export async function waitAllGone(pids: readonly number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!pids.some(isAlive)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

/** Process group id of a live process (Linux /proc); undefined when unknown. */
export function processGroupOf(pid: number): number | undefined {
  return hasProc ? procStat(pid)?.pgid : undefined;
}

const ownGroup = hasProc ? procStat(process.pid)?.pgid : undefined;

/** Sends a signal to a whole process group; ignores "no such process". */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid <= 1 || pgid === ownGroup || pgid === process.pid) {
    throw new Error(`refusing to signal process group ${pgid}: it is not a server's own group`);
  }
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Sends a signal to one process; ignores "no such process". */
export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Waits until the process group has no live member; false on timeout. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processGroupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

/** Last `lines` lines of a text file, or a note when it cannot be read. */
export async function tailFile(path: string, lines = 40): Promise<string> {
  try {
    const s = await stat(path);
    const size = Math.min(s.size, 64 * 1024);
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(size);
      await fh.read(buf, 0, size, s.size - size);
      return buf
        .toString('utf8')
        .split('\n')
        .slice(-lines - 1)
        .join('\n')
        .trimEnd();
    } finally {
      await fh.close();
    }
  } catch (err) {
    return `(cannot read ${path}: ${(err as Error).message})`;
  }
}

// ---------------------------------------------------------------------------
// Nothing we start may outlive us.
//
// Two layers: (1) a process 'exit' handler SIGKILLs every live server (its
// main process, that process's group when it leads one, and its direct
// children: Postgres backends each lead their own group) and removes its temp
// dir (normal exit, process.exit(), uncaught error); (2) a tiny detached
// watchdog shell per server that waits for this Node process to disappear
// (SIGKILL, a killed test worker, Ctrl-C) and then does the same, reading the
// server's current main pid from <dir>/.pid.

interface Guarded {
  mainPid: () => number | undefined;
  dir: string;
}

const guarded = new Map<number, Guarded>();
let nextGuardId = 1;
let exitHandlerInstalled = false;

/** SIGKILLs a server: its main process, its own group (if it leads one) and its direct children. */
export function killServerTree(pid: number): number[] {
  const targets = [pid, ...childrenOf(pid)];
  if (processGroupOf(pid) === pid && pid !== ownGroup) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const t of targets) signalPid(t, 'SIGKILL');
  return targets;
}

function onExit(): void {
  for (const g of guarded.values()) {
    const pid = g.mainPid();
    if (pid !== undefined) {
      try {
        killServerTree(pid);
      } catch {
        /* best effort */
      }
    }
  }
  for (const g of guarded.values()) {
    try {
      rmSync(g.dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      /* best effort */
    }
  }
}

const WATCHDOG_SCRIPT = [
  // $1 = pid to watch, $2 = server dir holding .pid; exits quietly once the dir is gone
  'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done',
  '[ -d "$2" ] || exit 0',
  'p=$(cat "$2/.pid" 2>/dev/null)',
  'if [ -n "$p" ]; then',
  '  kids=$(ps -o pid= --ppid "$p" 2>/dev/null)',
  '  kill -9 -"$p" 2>/dev/null',
  '  kill -9 "$p" $kids 2>/dev/null',
  '  sleep 1',
  'fi',
  'rm -rf "$2"',
].join('\n');

export interface Guard {
  release(): void;
}

/**
 * Registers a server's main process and temp dir for clean-up if this Node
 * process goes away without calling stop(). The caller keeps `<dir>/.pid` up
 * to date with the server's current main pid.
 */
export function guardServer(dir: string, mainPid: () => number | undefined): Guard {
  if (!exitHandlerInstalled) {
    process.on('exit', onExit);
    exitHandlerInstalled = true;
  }
  const id = nextGuardId++;
  guarded.set(id, { dir, mainPid });
  let watchdogPid: number | undefined;
  try {
    const child = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'outbox-tail-stack-watchdog', String(process.pid), dir], {
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => {
      /* no /bin/sh: the exit handler still covers normal exits */
    });
    child.unref();
    watchdogPid = child.pid;
  } catch {
    /* same */
  }
  return {
    release() {
      guarded.delete(id);
      if (watchdogPid !== undefined) signalPid(watchdogPid, 'SIGKILL');
    },
  };
}

/**
 * A server process of the native stack (postgres, the Kafka broker): its own
 * session (Ctrl-C in a terminal does not reach it), stdout and stderr appended
 * to a log file, its pid written to `<dir>/.pid` for the guard, and why it
 * ended once it has.
 */
export class ServerProcess {
  /** 'exit code 1', 'signal SIGKILL', 'spawn error: ...'; undefined while it runs. */
  exitInfo: string | undefined;
  /** Settles when the process has ended (or could not be spawned). */
  readonly exited: Promise<void>;

  private constructor(readonly child: ChildProcess) {
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = signal !== null ? `signal ${signal}` : `exit code ${code}`;
        resolve();
      });
      child.once('error', (err) => {
        this.exitInfo = `spawn error: ${err.message}`;
        resolve();
      });
    });
    child.unref();
  }

  static async start(
    command: string,
    args: string[],
    options: { cwd: string; logFile: string; pidDir: string; uid?: number; gid?: number },
  ): Promise<ServerProcess> {
    const out = openSync(options.logFile, 'a');
    let server: ServerProcess;
    try {
      const { cwd, uid, gid } = options;
      server = new ServerProcess(
        spawn(command, args, {
          cwd,
          detached: true,
          stdio: ['ignore', out, out],
          ...(uid !== undefined ? { uid } : {}),
          ...(gid !== undefined ? { gid } : {}),
        }),
      );
    } finally {
      closeSync(out);
    }
    if (server.child.pid !== undefined) await writeFile(join(options.pidDir, '.pid'), String(server.child.pid));
    return server;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The pid while the process runs, else undefined. */
  alivePid(): number | undefined {
    const pid = this.child.pid;
    return pid !== undefined && this.exitInfo === undefined && isAlive(pid) ? pid : undefined;
  }

  /** Whether it ended within `timeoutMs`. */
  async waitExit(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
    const ok = await Promise.race([this.exited.then(() => true), timedOut]);
    if (timer) clearTimeout(timer);
    return ok;
  }
}
