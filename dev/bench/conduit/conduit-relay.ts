/**
 * Conduit (Go) as a second peer for `npm run bench -- --compare conduit`
 * (issue 45): built once by fetch-conduit.sh from its Go module into the cache
 * outside the repo, configured by conduit.yaml (the engine) and pipeline.yml
 * (its Postgres source, a key processor, its Kafka destination) beside this
 * file. The process is a BenchProcess like the relays, so the bench's RSS, CPU
 * and log machinery applies unchanged.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, spawnProcess, type BenchProcess, type LogLine } from '../bench-process.js';

const HERE = `${ROOT}dev/bench/conduit/`;
/** The pipeline the bench runs unless --conduit-pipeline names another file. */
export const DEFAULT_CONDUIT_PIPELINE = `${HERE}pipeline.yml`;

/**
 * Conduits still running, with their run dirs: killed and removed when the
 * bench exits however it exits (an error thrown past a finally, SIGINT's
 * process.exit), so that no Conduit is left behind holding a slot.
 */
const live = new Map<BenchProcess, string>();
process.once('exit', () => {
  for (const [p, dir] of live) {
    p.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

export interface ConduitInstall {
  binary: string;
  /** e.g. v0.14.0, from `conduit --version`. */
  version: string;
}

/** Builds Conduit once (a no-op when cached) and asks the binary its version. */
export function installConduit(): ConduitInstall {
  const binary = execFileSync('bash', [`${HERE}fetch-conduit.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  // "v0.14.0 linux/amd64"
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim().split(/\s+/)[0]!;
  return { binary, version };
}

/** Conduit's zerolog JSON lines carry the text under `message` (pino's is `msg`). */
const messageOf = (l: LogLine) => (typeof l.message === 'string' ? l.message : typeof l.msg === 'string' ? l.msg : '');

/** The Postgres source logs this once its replication stream is open (CDCIterator.StartSubscriber). */
export const isConduitStreaming = (l: LogLine) => messageOf(l) === 'Logical replication started';

/** Conduit's error lines (zerolog level "error" or "fatal"), for a failure's message. */
export const conduitErrors = (p: BenchProcess): string[] =>
  p.logs.filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => `${messageOf(l)}${typeof l.error === 'string' ? `: ${l.error}` : ''}`);

/**
 * Starts Conduit on `slot`: a fresh run dir (conduit.yaml, pipelines/) that
 * stop() removes. The per-run values reach the pipeline file through the
 * environment, which Conduit expands in it. SIGTERM stops Conduit gracefully
 * (it stops the pipeline, which acks what it wrote), as the relays are stopped.
 */
export function spawnConduit(
  install: ConduitInstall,
  options: { name: string; databaseUrl: string; brokers: string[]; slot: string; pipeline?: string },
): BenchProcess {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-conduit-'));
  mkdirSync(join(dir, 'pipelines'));
  copyFileSync(`${HERE}conduit.yaml`, join(dir, 'conduit.yaml'));
  copyFileSync(options.pipeline ?? DEFAULT_CONDUIT_PIPELINE, join(dir, 'pipelines/pipeline.yml'));
  const proc = spawnProcess({
    name: options.name,
    command: install.binary,
    // Every path Conduit defaults to is under its working directory: the run dir.
    args: ['run', '--config.path', join(dir, 'conduit.yaml')],
    env: {
      OUTBOX_TAIL_BENCH_DATABASE_URL: options.databaseUrl,
      OUTBOX_TAIL_BENCH_SLOT: options.slot,
      OUTBOX_TAIL_BENCH_BROKERS: options.brokers.join(','),
    },
    cwd: dir,
  });
  live.set(proc, dir);
  void proc.exited.then(() => live.delete(proc));
  const stop = proc.stop.bind(proc);
  proc.stop = async (graceMs) => {
    await stop(graceMs);
    rmSync(dir, { recursive: true, force: true });
  };
  return proc;
}
