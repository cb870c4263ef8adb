/**
 * The stack on a container engine through Testcontainers: a Docker engine with
 * the official images, or the project's private Podman engine with the images
 * bin/build-images.sh made from Debian's packages (docs/containers.md). The
 * testcontainers packages are dev dependencies and are imported dynamically,
 * so the published package works without them.
 *
 * Host ports are fixed and bound to 127.0.0.1 only (picked free before the
 * containers are created), so that kill/stop + start of a container keeps the
 * same port and Kafka's advertised listener stays valid.
 *
 * Waiting needs no container health check (Podman cannot run one without
 * systemd): Postgres is ready when the port listens and the "ready to accept
 * connections" line came twice (init server, then the real one), Kafka when a
 * client gets metadata and an idempotent producer id.
 */
import type { StartedKafkaContainer } from '@testcontainers/kafka';
import type { StartedPostgreSqlContainer } from '@testcontainers/postgresql';
import type { StartedTestContainer } from 'testcontainers';
import { queryPostgres, waitForIdempotentProducer, waitForKafka, waitForPostgres } from './probe.js';
import { freePort, isAlive } from './process.js';
import type { ServerControl, StackHandle } from './types.js';
import { POSTGRES_CAPACITY } from './postgres-capacity.js';

export const DEFAULT_POSTGRES_IMAGE = 'postgres:17';
export const DEFAULT_KAFKA_IMAGE = 'confluentinc/cp-kafka:8.1.1';
const POSTGRES_CONTAINER_PORT = 5432;
const KAFKA_CONTAINER_PORT = 9093;
/** Every container this provider creates carries it, with the creating process's pid. */
export const OWNER_LABEL = 'io.outbox-tail.stack-owner-pid';

/** Resolves true when a container runtime answers within `timeoutMs`. */
export async function containerRuntimeAvailable(timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    return await Promise.race([getContainerRuntimeClient().then(() => true), timeout]);
  } catch {
    return false; // no runtime, or testcontainers not installed
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** cp-kafka maps KAFKA_FOO_BAR env to foo.bar: '.' -> '_', '_' -> '__', '-' -> '___'. */
export function confluentEnvName(property: string): string {
  return `KAFKA_${property.replace(/_/g, '__').replace(/-/g, '___').replace(/\./g, '_').toUpperCase()}`;
}

/**
 * The Docker API's PortBindings for fixed host ports on loopback only. Without
 * a HostIp, engines publish on every interface.
 */
export function loopbackPortBindings(ports: Record<number, number>): Record<string, { HostIp: string; HostPort: string }[]> {
  return Object.fromEntries(Object.entries(ports).map(([container, host]) => [`${container}/tcp`, [{ HostIp: '127.0.0.1', HostPort: String(host) }]]));
}

/**
 * Removes containers a dead process of ours left behind (a test runner killed
 * before its teardown). There is no Ryuk on our machines to do it.
 */
export async function removeOrphanContainers(log: (line: string) => void): Promise<number> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  const client = await getContainerRuntimeClient();
  const orphans = (await client.container.list()).filter((c) => {
    const owner = Number(c.Labels?.[OWNER_LABEL]);
    return Number.isInteger(owner) && owner > 0 && !isAlive(owner);
  });
  for (const c of orphans) {
    log(`removing container ${c.Names?.[0] ?? c.Id} left by dead process ${c.Labels?.[OWNER_LABEL]}`);
    await client.container.remove(client.container.getById(c.Id), { removeVolumes: true }).catch(async () => {
      await client.container.getById(c.Id).remove({ force: true, v: true });
    });
  }
  return orphans.length;
}

class ContainerControl implements ServerControl {
  private lastPid: number | undefined;

  constructor(
    private readonly container: StartedTestContainer,
    private readonly name: string,
    private readonly waitReady: () => Promise<void>,
    private readonly signals: { fast: NodeJS.Signals; immediate: NodeJS.Signals },
  ) {}

  private async docker() {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const client = await getContainerRuntimeClient();
    return { client, dockerode: client.container.getById(this.container.getId()) };
  }

  async refreshPid(): Promise<void> {
    const { client, dockerode } = await this.docker();
    const info = await client.container.inspect(dockerode);
    this.lastPid = info.State.Running ? info.State.Pid : undefined;
  }

  pid(): number | undefined {
    return this.lastPid;
  }

  markStopped(): void {
    this.lastPid = undefined;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const { client, dockerode } = await this.docker();
    const info = await client.container.inspect(dockerode);
    if (!info.State.Running) return;
    await dockerode.kill({ signal });
    await dockerode.wait();
    this.lastPid = undefined;
  }

  async stop(): Promise<void> {
    const { client, dockerode } = await this.docker();
    await client.container.stop(dockerode, { timeout: 30 });
    this.lastPid = undefined;
  }

  async start(): Promise<void> {
    const { client, dockerode } = await this.docker();
    const info = await client.container.inspect(dockerode);
    if (info.State.Running) throw new Error(`${this.name} container is already running`);
    await client.container.start(dockerode);
    await this.waitReady();
    await this.refreshPid();
  }

  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.kill(this.signals[mode]);
    await this.start();
  }
}

export interface TestcontainersImages {
  postgres: string;
  kafka: string;
}

export async function startTestcontainersStack(opts: {
  postgresSettings?: Record<string, string>;
  kafkaSettings?: Record<string, string>;
  images?: Partial<TestcontainersImages>;
  /**
   * Docker API NetworkMode of both containers. Podman's Docker API puts a
   * container on a CNI bridge by default, which changes the host (ip_forward,
   * iptables); slirp4netns needs no host change (bin/with-engine.sh sets it).
   */
  networkMode?: string;
  /** Extra PLAINTEXT listeners, each on a fixed 127.0.0.1 host port. */
  kafkaExtraListeners?: string[];
  /** For an extra listener, the host:port to advertise instead of its own (a proxy in front of it). */
  kafkaAdvertisedListeners?: Record<string, string>;
  readyTimeoutMs: number;
  log: (line: string) => void;
}): Promise<StackHandle> {
  const { Wait } = await import('testcontainers');
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const images: TestcontainersImages = {
    postgres: opts.images?.postgres ?? DEFAULT_POSTGRES_IMAGE,
    kafka: opts.images?.kafka ?? DEFAULT_KAFKA_IMAGE,
  };
  const t0 = Date.now();
  await removeOrphanContainers(opts.log);

  const pgSettings: Record<string, string> = {
    wal_level: 'logical',
    ...POSTGRES_CAPACITY,
    fsync: 'off',
    synchronous_commit: 'on',
    full_page_writes: 'off',
    ...opts.postgresSettings,
  };
  // Host ports are fixed before the containers start (the broker advertises
  // its own), so another process can take one between freePort() and the
  // bind: each attempt picks new ones, and a bind failure is retried.
  let pgPort = 0;
  let kafkaPort = 0;
  // Container ports from 9095 on: 9092 (BROKER), 9093 (PLAINTEXT) and 9094
  // (CONTROLLER) are KafkaContainer's.
  let extraListeners: { name: string; containerPort: number; hostPort: number; advertised: string }[] = [];
  const pickPorts = async () => {
    pgPort = await freePort();
    kafkaPort = await freePort();
    while (kafkaPort === pgPort) kafkaPort = await freePort();
    extraListeners = [];
    for (const [i, name] of (opts.kafkaExtraListeners ?? []).entries()) {
      let hostPort = await freePort();
      while ([pgPort, kafkaPort, ...extraListeners.map((l) => l.hostPort)].includes(hostPort)) hostPort = await freePort();
      extraListeners.push({ name, containerPort: 9095 + i, hostPort, advertised: opts.kafkaAdvertisedListeners?.[name] ?? `127.0.0.1:${hostPort}` });
    }
  };
  const labels = { [OWNER_LABEL]: String(process.pid) };

  // PostgreSqlContainer's default wait needs a health check; ours does not.
  // Binding ports in beforeContainerCreated: the images' own hooks run first.
  class LoopbackPostgres extends PostgreSqlContainer {
    protected override async beforeContainerCreated(): Promise<void> {
      this.hostConfig.PortBindings = loopbackPortBindings({ [POSTGRES_CONTAINER_PORT]: pgPort });
    }
  }
  // KafkaContainer's hook adds the PLAINTEXT port again with a random host
  // port, which would replace ours: after a restart the broker would then
  // advertise a port that may be gone. Keep the fixed one.
  class LoopbackKafka extends KafkaContainer {
    protected override async beforeContainerCreated(): Promise<void> {
      await super.beforeContainerCreated();
      const env = this.environment;
      this.withEnvironment({
        KAFKA_LISTENERS: [env.KAFKA_LISTENERS, ...extraListeners.map((l) => `${l.name}://0.0.0.0:${l.containerPort}`)].join(','),
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: [env.KAFKA_LISTENER_SECURITY_PROTOCOL_MAP, ...extraListeners.map((l) => `${l.name}:PLAINTEXT`)].join(','),
      });
      for (const l of extraListeners) this.createOpts.ExposedPorts = { ...this.createOpts.ExposedPorts, [`${l.containerPort}/tcp`]: {} };
      this.exposedPorts = [
        { container: KAFKA_CONTAINER_PORT, host: kafkaPort },
        ...extraListeners.map((l) => ({ container: l.containerPort, host: l.hostPort })),
      ];
      this.hostConfig.PortBindings = loopbackPortBindings({
        [KAFKA_CONTAINER_PORT]: kafkaPort,
        ...Object.fromEntries(extraListeners.map((l) => [l.containerPort, l.hostPort])),
      });
    }
  }
  // KafkaContainer computes the advertised listeners in a private method when
  // the container started; the extra listeners are appended to its result.
  const proto = LoopbackKafka.prototype as unknown as { updateAdvertisedListeners: (...args: unknown[]) => string };
  const computeAdvertised = proto.updateAdvertisedListeners;
  if (typeof computeAdvertised !== 'function') throw new Error('@testcontainers/kafka changed: KafkaContainer.updateAdvertisedListeners is gone');
  proto.updateAdvertisedListeners = function (this: unknown, ...args: unknown[]) {
    return [computeAdvertised.apply(this, args), ...extraListeners.map((l) => `${l.name}://${l.advertised}`)].join(',');
  };

  let pgContainer: StartedPostgreSqlContainer | undefined;
  let kafkaContainer: StartedKafkaContainer | undefined;
  const stopAll = async () => {
    const results = await Promise.allSettled([pgContainer?.stop({ timeout: 10 }), kafkaContainer?.stop({ timeout: 10 })]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  for (let attempt = 1; ; attempt++) {
    await pickPorts();
    try {
      const kafkaEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.kafkaSettings ?? {})) kafkaEnv[confluentEnvName(k)] = v;
      const started = await Promise.allSettled([
        new LoopbackPostgres(images.postgres)
          .withDatabase('outbox_tail')
          .withUsername('postgres')
          .withPassword('postgres')
          .withLabels(labels)
          .withNetworkMode(opts.networkMode ?? 'bridge')
          .withExposedPorts({ container: POSTGRES_CONTAINER_PORT, host: pgPort })
          .withWaitStrategy(Wait.forAll([Wait.forListeningPorts(), Wait.forLogMessage(/database system is ready to accept connections/, 2)]))
          .withStartupTimeout(opts.readyTimeoutMs)
          .withCommand(['postgres', ...Object.entries(pgSettings).flatMap(([k, v]) => ['-c', `${k}=${v}`])])
          .start(),
        new LoopbackKafka(images.kafka)
          .withKraft()
          .withLabels(labels)
          .withNetworkMode(opts.networkMode ?? 'bridge')
          .withStartupTimeout(opts.readyTimeoutMs)
          .withEnvironment({
            KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
            KAFKA_NUM_PARTITIONS: '1',
            KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
            ...kafkaEnv,
          })
          .start(),
      ]);
      if (started[0].status === 'fulfilled') pgContainer = started[0].value;
      if (started[1].status === 'fulfilled') kafkaContainer = started[1].value;
      const failed = started.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length > 0) throw new Error(failed.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('; '));
      break;
    } catch (err) {
      await stopAll().catch(() => undefined);
      pgContainer = undefined;
      kafkaContainer = undefined;
      if (attempt < 3 && /address already in use/i.test((err as Error).message)) {
        opts.log(
          `a host port was taken before the containers bound it (${(err as Error).message.slice(0, 160)}); retrying with new ports (attempt ${attempt + 1} of 3)`,
        );
        continue;
      }
      // Podman 4.3's followed log stream can end before the container logged its readiness (seen once in CI while
      // other files killed and restarted containers of their own): the wait fails though nothing is known to be
      // wrong with the server. Start it afresh; a container that really cannot start fails all three attempts.
      if (attempt < 3 && /Log stream ended/i.test((err as Error).message)) {
        opts.log(
          `the container's log stream ended before it reported ready (${(err as Error).message.slice(0, 160)}); starting afresh (attempt ${attempt + 1} of 3)`,
        );
        continue;
      }
      throw new Error(
        `testcontainers stack failed to start (images ${images.postgres}, ${images.kafka}): ${(err as Error).message}. ` +
          'Without a Docker engine, run `npm run setup` (as root) and use the private engine: bin/with-engine.sh <command> (docs/containers.md).',
        { cause: err },
      );
    }
  }
  const pgC = pgContainer!;
  const kC = kafkaContainer!;

  const databaseUrl = pgC.getConnectionUri();
  const brokers = [`${kC.getHost()}:${kC.getMappedPort(KAFKA_CONTAINER_PORT)}`];
  const kafkaReady = async () => {
    await waitForKafka(brokers, opts.readyTimeoutMs);
    await waitForIdempotentProducer(brokers, opts.readyTimeoutMs);
  };
  const postgres = new ContainerControl(pgC, 'postgres', async () => void (await waitForPostgres(databaseUrl, opts.readyTimeoutMs)), {
    fast: 'SIGINT', // postgres: SIGINT = fast shutdown
    immediate: 'SIGQUIT', // postgres: SIGQUIT = immediate shutdown (crash recovery on start)
  });
  const kafka = new ContainerControl(kC, 'kafka', kafkaReady, {
    fast: 'SIGKILL',
    immediate: 'SIGKILL',
  });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= stopAll().finally(() => {
      postgres.markStopped();
      kafka.markStopped();
    }));
  try {
    await kafkaReady();
    const pgInfo = await queryPostgres(databaseUrl);
    let kafkaVersion = images.kafka;
    const res = await kC.exec(['kafka-topics', '--version']).catch(() => undefined);
    const v = res?.output
      .trim()
      .split(/\s+/)
      .find((word) => /^\d+\.\d+\.\d+/.test(word));
    if (res?.exitCode === 0 && v) kafkaVersion = `${v} (${images.kafka})`;
    await Promise.all([postgres.refreshPid(), kafka.refreshPid()]);
    opts.log(`testcontainers stack ready in ${Date.now() - t0} ms: ${images.postgres} on 127.0.0.1:${pgPort}, ${images.kafka} on ${brokers[0]}`);
    return {
      provider: 'testcontainers',
      databaseUrl,
      brokers,
      versions: { postgres: pgInfo.version, kafka: kafkaVersion },
      images,
      postgres,
      kafka,
      workDirs: [],
      ...(extraListeners.length > 0 ? { kafkaListeners: Object.fromEntries(extraListeners.map((l) => [l.name, [`127.0.0.1:${l.hostPort}`]])) } : {}),
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
