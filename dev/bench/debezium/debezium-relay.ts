/**
 * Debezium Server as a second relay for `npm run bench -- --compare debezium`
 * (issue 16): fetched once by fetch-debezium.sh into the cache outside the
 * repo, run on its own JDK (21+; the broker stays on Java 17), configured by
 * application.properties beside this file plus the per-run values as system
 * properties. The process is a BenchProcess like the relays, so the bench's
 * RSS, CPU and log machinery applies unchanged.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../stack/process.js';
import { ROOT, spawnProcess, type BenchProcess, type LogLine } from '../bench-process.js';

const HERE = `${ROOT}dev/bench/debezium/`;

/**
 * JVMs still running, with their run dirs: killed and removed when the bench
 * exits however it exits (an error thrown past a finally, SIGINT's
 * process.exit), so that no Debezium is left behind holding a slot.
 */
const live = new Map<BenchProcess, string>();
process.once('exit', () => {
  for (const [p, dir] of live) {
    p.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

export interface DebeziumInstall {
  /** The extracted debezium-server directory (run.sh, lib/). */
  home: string;
  /** e.g. 3.6.3.Final, from the runner jar's name. */
  version: string;
  java: string;
  /** e.g. 25.0.3+9-LTS (Temurin), from the JDK's release file. */
  javaVersion: string;
}

/** JAVA_RUNTIME_VERSION (or JAVA_VERSION) of a JDK directory's `release` file, or null. */
function jdkVersion(jdk: string): string | null {
  try {
    const release = readFileSync(join(jdk, 'release'), 'utf8');
    return (/^JAVA_RUNTIME_VERSION="([^"]+)"/m.exec(release) ?? /^JAVA_VERSION="([^"]+)"/m.exec(release))?.[1] ?? null;
  } catch {
    return null;
  }
}

const major = (version: string) => Number(/^(\d+)/.exec(version)?.[1] ?? 0);

/**
 * A JDK >= 21 for Debezium Server 3.x: OUTBOX_TAIL_DEBEZIUM_JAVA_HOME, else
 * the newest under /usr/lib/jvm (our machines carry Temurin 25 beside the
 * OpenJDK 17 the broker runs on; JAVA_HOME is left to the broker).
 */
export function findJava21(env: Record<string, string | undefined> = process.env): { java: string; version: string } {
  const given = env.OUTBOX_TAIL_DEBEZIUM_JAVA_HOME;
  const candidates = given ? [given] : existsSync('/usr/lib/jvm') ? readdirSync('/usr/lib/jvm').map((d) => `/usr/lib/jvm/${d}`) : [];
  let best: { java: string; version: string } | null = null;
  for (const jdk of candidates) {
    const version = jdkVersion(jdk);
    const java = join(jdk, 'bin/java');
    if (!version || major(version) < 21 || !existsSync(java)) continue;
    if (!best || major(version) > major(best.version)) best = { java, version };
  }
  if (!best)
    throw new Error(
      given
        ? `OUTBOX_TAIL_DEBEZIUM_JAVA_HOME=${given} is not a JDK >= 21 (no release file with JAVA_VERSION >= 21, or no bin/java)`
        : 'Debezium Server 3.x needs Java 21+: no JDK >= 21 under /usr/lib/jvm; set OUTBOX_TAIL_DEBEZIUM_JAVA_HOME',
    );
  return best;
}

/** Fetches and extracts Debezium Server once (a no-op when cached), and finds its JDK. */
export function installDebezium(): DebeziumInstall {
  const home = execFileSync('bash', [`${HERE}fetch-debezium.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const runner = readdirSync(home).find((f) => /^debezium-server-dist-.*-runner\.jar$/.test(f));
  if (!runner) throw new Error(`${home}: no debezium-server-dist-*-runner.jar`);
  const { java, version: javaVersion } = findJava21();
  return { home, version: runner.replace(/^debezium-server-dist-/, '').replace(/-runner\.jar$/, ''), java, javaVersion };
}

/**
 * Flags the JVM needs to run Debezium Server at all: on Java 24+ Quarkus'
 * jboss-threads resets thread locals through java.lang internals, and without
 * this its executor threads die at start-up (IllegalAccessError: "module
 * java.base does not open java.lang to unnamed module", seen with Temurin 25).
 * Nothing else: heap and GC stay at the JVM's defaults, as run.sh leaves them.
 */
function jvmFlags(javaVersion: string): string[] {
  return major(javaVersion) >= 24 ? ['--add-opens=java.base/java.lang=ALL-UNNAMED'] : [];
}

/** Debezium's PostgreSQL connector logs this once it reads from the slot (PostgresStreamingChangeEventSource). */
export const isDebeziumStreaming = (l: LogLine) => typeof l.msg === 'string' && l.msg.includes('Processing messages');

/**
 * Starts Debezium Server on `slot`: a fresh run dir (config/ with the
 * properties, the offsets file) that stop() removes. The JVM is spawned
 * directly with run.sh's classpath rather than through run.sh, so that the
 * pid whose RSS and CPU the bench reads is the JVM itself.
 */
export async function spawnDebezium(
  install: DebeziumInstall,
  options: { name: string; databaseUrl: string; brokers: string[]; slot: string; javaOpts?: string[]; props?: Record<string, string> },
): Promise<BenchProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-debezium-'));
  mkdirSync(join(dir, 'config'));
  copyFileSync(`${HERE}application.properties`, join(dir, 'config/application.properties'));
  const url = new URL(options.databaseUrl);
  const props: Record<string, string> = {
    'debezium.source.database.hostname': url.hostname,
    'debezium.source.database.port': url.port || '5432',
    'debezium.source.database.user': decodeURIComponent(url.username || 'postgres'),
    'debezium.source.database.dbname': decodeURIComponent(url.pathname.slice(1)),
    'debezium.source.slot.name': options.slot,
    'debezium.source.offset.storage.file.filename': join(dir, 'offsets.dat'),
    'debezium.sink.kafka.producer.bootstrap.servers': options.brokers.join(','),
    'quarkus.http.port': String(await freePort()),
    // Last, so that the bench's --debezium-prop overrides the file (system properties win over it).
    ...options.props,
  };
  if (url.password) props['debezium.source.database.password'] = decodeURIComponent(url.password);
  const classpath = [`${install.home}/debezium-server-dist-${install.version}-runner.jar`, `${install.home}/config/lib`, `${install.home}/lib/*`].join(':');
  const proc = spawnProcess({
    name: options.name,
    command: install.java,
    args: [
      ...jvmFlags(install.javaVersion),
      ...(options.javaOpts ?? []),
      ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`),
      '-cp',
      classpath,
      'io.debezium.server.Main',
    ],
    env: {},
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
