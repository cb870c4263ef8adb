/**
 * A throw-away single-node Kafka (KRaft, broker+controller) run from the jars
 * that `npm run setup` (bin/setup-local-stack.sh) caches with Maven.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForIdempotentProducer, waitForKafka } from './probe.js';
import { freePort, guardServer, run, ServerProcess, signalGroup, tailFile, waitGroupGone, type Guard } from './process.js';
import type { ServerControl } from './types.js';

/** The default; must match KAFKA_VERSION in bin/setup-local-stack.sh (which also fetches the extra versions). */
export const KAFKA_VERSION = '4.1.1';
export const KAFKA_SCALA_VERSION = '2.13';
export const MIN_JAVA_MAJOR = 17;

/** Checks the jar cache written by the setup script; returns lib dir and version. */
export async function findKafkaJars(cacheDir: string, wanted: string = KAFKA_VERSION): Promise<{ libDir: string; version: string }> {
  const base = join(cacheDir, `kafka-${wanted}`);
  const libDir = join(base, 'lib');
  const hint =
    `run \`npm run setup\` (bash bin/setup-local-stack.sh${wanted === KAFKA_VERSION ? '' : `, with OUTBOX_TAIL_EXTRA_KAFKA_VERSIONS=${wanted}`}) to fetch them once with Maven into ${libDir}, ` +
    'or run the tests with a Docker engine (OUTBOX_TAIL_STACK=testcontainers)';
  try {
    await access(join(base, '.complete'));
  } catch {
    throw new Error(`Kafka ${wanted} jars not found (no complete download in ${base}): ${hint}`);
  }
  let files: string[];
  try {
    files = await readdir(libDir);
  } catch {
    throw new Error(`Kafka ${wanted} jar dir ${libDir} is missing: ${hint}`);
  }
  const jar = files.find((f) => new RegExp(`^kafka_${KAFKA_SCALA_VERSION.replace('.', '\\.')}-(.+)\\.jar$`).test(f));
  const version = jar?.match(/^kafka_[\d.]+-(.+)\.jar$/)?.[1];
  if (version === undefined) throw new Error(`no kafka_${KAFKA_SCALA_VERSION}-*.jar in ${libDir}: ${hint}`);
  return { libDir, version };
}

/** Parses the major version from `java -version` output ("17.0.15", "1.8.0_392"). */
export function parseJavaMajor(versionOutput: string): number | undefined {
  const m = versionOutput.match(/version "(\d+)(?:\.(\d+))?/);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 ? Number(m[2]) : first;
}

const javaChecked = new Map<string, Promise<void>>();

/** Throws unless `java` is Java 17+. */
export function checkJava(javaBin: string): Promise<void> {
  let p = javaChecked.get(javaBin);
  if (!p) {
    p = (async () => {
      const hint = 'install openjdk-17-jre-headless (npm run setup), or run with a Docker engine';
      let out: string;
      try {
        out = (await run(javaBin, ['-version'], { timeoutMs: 30_000 })).output;
      } catch {
        throw new Error(`Java ${MIN_JAVA_MAJOR}+ not found (no ${javaBin}): ${hint}`);
      }
      const major = parseJavaMajor(out);
      if (major === undefined || major < MIN_JAVA_MAJOR) {
        throw new Error(`Java ${MIN_JAVA_MAJOR}+ not found (${javaBin} reports: ${out.split('\n')[0]?.trim()}): ${hint}`);
      }
    })();
    javaChecked.set(javaBin, p);
    p.catch(() => javaChecked.delete(javaBin));
  }
  return p;
}

/** A Kafka cluster id: 16 random bytes, base64url without padding (like Uuid.randomUuid()). */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export interface NativeKafkaOptions {
  javaBin: string;
  libDir: string;
  version: string;
  settings?: Record<string, string>;
  /** Extra listeners, name -> security protocol (e.g. { SASL_SSL: 'SASL_SSL' }): each gets a free 127.0.0.1 port. */
  extraListeners?: Record<string, string>;
  /** For an extra listener, the host:port the broker advertises for it (default: its own port), e.g. a proxy in front of it. */
  advertisedListeners?: Record<string, string>;
  /** Extra arguments for `kafka-storage format` (e.g. --add-scram ...). */
  formatArgs?: string[];
  /** C1 JIT only and the serial GC: a JVM that starts on less CPU (StartStackOptions.kafkaQuickStart). */
  quickStart?: boolean;
  readyTimeoutMs: number;
  log: (line: string) => void;
}

export class NativeKafka implements ServerControl {
  readonly propsFile: string;
  readonly logFile: string;
  readonly outFile: string;
  readonly dataDir: string;
  private server: ServerProcess | null = null;
  private guard: Guard | undefined;
  port = 0;
  controllerPort = 0;
  /** Port of each extra listener (NativeKafkaOptions.extraListeners). */
  extraPorts: Record<string, number> = {};

  private constructor(
    readonly root: string,
    private readonly opts: NativeKafkaOptions,
  ) {
    this.propsFile = join(root, 'server.properties');
    this.logFile = join(root, 'kafka-server.log');
    this.outFile = join(root, 'kafka.out');
    this.dataDir = join(root, 'data');
  }

  get version(): string {
    return this.opts.version;
  }

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  /** Brokers of each extra listener. */
  get listenerBrokers(): Record<string, string[]> {
    return Object.fromEntries(Object.entries(this.extraPorts).map(([name, port]) => [name, [`127.0.0.1:${port}`]]));
  }

  static async start(opts: NativeKafkaOptions): Promise<NativeKafka> {
    await checkJava(opts.javaBin);
    const root = await mkdtemp(join(tmpdir(), 'outbox-tail-kafka-'));
    const server = new NativeKafka(root, opts);
    try {
      await server.init();
      return server;
    } catch (err) {
      await server.destroy().catch(() => undefined);
      throw err;
    }
  }

  private async init(): Promise<void> {
    const t0 = Date.now();
    this.guard = guardServer(this.root, () => this.pid());
    await writeFile(
      join(this.root, 'log4j2.properties'),
      [
        'status = warn',
        'appender.file.type = File',
        'appender.file.name = FILE',
        `appender.file.fileName = ${this.logFile}`,
        'appender.file.layout.type = PatternLayout',
        'appender.file.layout.pattern = [%d] %p %m (%c)%n',
        'rootLogger.level = WARN',
        'rootLogger.appenderRef.file.ref = FILE',
        // one INFO line that says the server is up
        'logger.started.name = kafka.server.KafkaRaftServer',
        'logger.started.level = INFO',
        '',
      ].join('\n'),
    );
    for (let attempt = 1; ; attempt++) {
      this.port = await freePort();
      this.controllerPort = await freePort();
      while (this.controllerPort === this.port) this.controllerPort = await freePort();
      this.extraPorts = {};
      for (const name of Object.keys(this.opts.extraListeners ?? {})) {
        let port = await freePort();
        while ([this.port, this.controllerPort, ...Object.values(this.extraPorts)].includes(port)) port = await freePort();
        this.extraPorts[name] = port;
      }
      await rm(this.dataDir, { recursive: true, force: true });
      await this.writeProps();
      await this.format();
      try {
        await this.start();
        break;
      } catch (err) {
        // 400 lines: the BindException is a "Caused by" above a stack trace and a shutdown warning (22 lines below it
        // in a CI run where a 20-line tail missed it and the port race failed a test instead of being retried).
        const tail = `${await tailFile(this.outFile, 400)}\n${await tailFile(this.logFile, 400)}`;
        if (attempt < 3 && /Address already in use|BindException/.test(tail)) {
          this.opts.log(`native kafka: port ${this.port}/${this.controllerPort} taken, retrying with other ports`);
          await this.kill('SIGKILL');
          continue;
        }
        throw err;
      }
    }
    this.opts.log(`native kafka ${this.version}: ready on 127.0.0.1:${this.port} in ${Date.now() - t0} ms (${this.root})`);
  }

  private async writeProps(): Promise<void> {
    const extra = Object.entries(this.opts.extraListeners ?? {});
    const extraListeners = extra.map(([name]) => `,${name}://127.0.0.1:${this.extraPorts[name]}`).join('');
    const advertised = this.opts.advertisedListeners ?? {};
    const extraAdvertised = extra.map(([name]) => `,${name}://${advertised[name] ?? `127.0.0.1:${this.extraPorts[name]}`}`).join('');
    const props: Record<string, string> = {
      'process.roles': 'broker,controller',
      'node.id': '1',
      'controller.quorum.voters': `1@127.0.0.1:${this.controllerPort}`,
      listeners: `PLAINTEXT://127.0.0.1:${this.port},CONTROLLER://127.0.0.1:${this.controllerPort}${extraListeners}`,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${this.port}${extraAdvertised}`,
      'listener.security.protocol.map': `PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${extra.map(([name, protocol]) => `,${name}:${protocol}`).join('')}`,
      'controller.listener.names': 'CONTROLLER',
      'inter.broker.listener.name': 'PLAINTEXT',
      'log.dirs': this.dataDir,
      'offsets.topic.replication.factor': '1',
      'offsets.topic.num.partitions': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'transaction.state.log.num.partitions': '1',
      'share.coordinator.state.topic.replication.factor': '1',
      'share.coordinator.state.topic.min.isr': '1',
      'min.insync.replicas': '1',
      'default.replication.factor': '1',
      'group.initial.rebalance.delay.ms': '0',
      'num.partitions': '1',
      'auto.create.topics.enable': 'true',
      // After kill -9 the restarted broker cannot register until its previous
      // session expired (default 9 s): keep fault-injection restarts short.
      'broker.session.timeout.ms': '3000',
      'broker.heartbeat.interval.ms': '500',
      ...this.opts.settings,
    };
    const text = Object.entries(props)
      .map(([k, v]) => `${k}=${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`)
      .join('\n');
    await writeFile(this.propsFile, `# written by outbox-tail dev/stack\n${text}\n`);
  }

  private jvmArgs(extra: string[]): string[] {
    return [...extra, '-Djava.awt.headless=true', `-Dlog4j2.configurationFile=${join(this.root, 'log4j2.properties')}`, '-cp', join(this.opts.libDir, '*')];
  }

  private async format(): Promise<void> {
    const res = await run(
      this.opts.javaBin,
      [
        // a short-lived tool: start fast rather than run fast
        ...this.jvmArgs(['-Xmx256m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']),
        'kafka.tools.StorageTool',
        'format',
        '-t',
        randomClusterId(),
        '-c',
        this.propsFile,
        ...(this.opts.formatArgs ?? []),
      ],
      { cwd: this.root, timeoutMs: 120_000 },
    );
    if (res.code !== 0) throw new Error(`kafka StorageTool format failed (exit ${res.code}):\n${res.output.trim()}`);
  }

  pid(): number | undefined {
    return this.server?.alivePid();
  }

  /** The broker's pid unless it has already ended. */
  private runningPid(): number | undefined {
    const server = this.server;
    return server && server.exitInfo === undefined ? server.pid : undefined;
  }

  async start(): Promise<void> {
    if (this.pid() !== undefined) throw new Error(`kafka is already running (pid ${this.server?.pid})`);
    const server = await ServerProcess.start(
      this.opts.javaBin,
      [
        ...this.jvmArgs([
          '-Xmx512m',
          '-Xms256m',
          '-XX:+ExitOnOutOfMemoryError',
          ...(this.opts.quickStart ? ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] : []),
        ]),
        'kafka.Kafka',
        this.propsFile,
      ],
      { cwd: this.root, logFile: this.outFile, pidDir: this.root },
    );
    this.server = server;
    try {
      const t0 = Date.now();
      await waitForKafka(this.brokers, this.opts.readyTimeoutMs, () =>
        server.exitInfo !== undefined ? `the Kafka process exited (${server.exitInfo}) before it was ready` : undefined,
      );
      await waitForIdempotentProducer(this.brokers, Math.max(5000, this.opts.readyTimeoutMs - (Date.now() - t0)));
    } catch (err) {
      const message =
        `${(err as Error).message}\n--- ${this.outFile} ---\n${await tailFile(this.outFile, 30)}\n` +
        `--- ${this.logFile} ---\n${await tailFile(this.logFile, 30)}`;
      await this.kill('SIGKILL').catch(() => undefined);
      throw new Error(message, { cause: err });
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pid = this.runningPid();
    if (pid === undefined) return;
    signalGroup(pid, signal);
    if (signal === 'SIGKILL') {
      await this.waitExit(30_000);
    } else if (!(await this.waitExit(30_000, false))) {
      throw new Error(`kafka (pid ${pid}) still running 30 s after ${signal}`);
    }
  }

  /** Graceful: SIGTERM (controlled shutdown), SIGKILL after 30 s. */
  async stop(): Promise<void> {
    const pid = this.runningPid();
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    if (!(await this.waitExit(30_000, false))) {
      signalGroup(pid, 'SIGKILL');
      await this.waitExit(30_000);
    }
  }

  /** kill -9, then start with the same data dir and ports. */
  async restart(): Promise<void> {
    await this.kill('SIGKILL');
    await this.start();
  }

  private async waitExit(timeoutMs: number, mustExit = true): Promise<boolean> {
    const pid = this.server?.pid;
    const ok = this.server ? await this.server.waitExit(timeoutMs) : true;
    if (ok && pid !== undefined) await waitGroupGone(pid, 5_000);
    if (!ok && mustExit) throw new Error(`kafka (pid ${pid}) did not exit within ${timeoutMs} ms`);
    return ok;
  }

  /** Stops the broker (SIGTERM, SIGKILL after 10 s) and removes the temp dir. */
  async destroy(): Promise<void> {
    const pid = this.runningPid();
    if (pid !== undefined) {
      signalGroup(pid, 'SIGTERM');
      if (!(await this.waitExit(10_000, false))) {
        signalGroup(pid, 'SIGKILL');
        await this.waitExit(10_000);
      }
    }
    this.guard?.release();
    this.guard = undefined;
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}
