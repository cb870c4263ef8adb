/**
 * The stack on a container runtime (Docker/Podman) via Testcontainers. The
 * testcontainers packages are dev dependencies and are imported dynamically,
 * so the published package works without them.
 *
 * Host ports are fixed (picked free on 127.0.0.1 before the containers are
 * created) so that kill/stop + start of a container keeps the same port, and
 * Kafka's advertised listener stays valid. This assumes the container runtime
 * publishes ports on this machine (a local Docker engine).
 */
import type { StartedKafkaContainer } from '@testcontainers/kafka';
import type { StartedPostgreSqlContainer } from '@testcontainers/postgresql';
import type { StartedTestContainer } from 'testcontainers';
import { queryPostgres, waitForIdempotentProducer, waitForKafka, waitForPostgres } from './probe.js';
import { freePort } from './process.js';
import type { ServerControl, StackHandle } from './types.js';

export const POSTGRES_IMAGE = 'postgres:17';
export const KAFKA_IMAGE = 'confluentinc/cp-kafka:8.0.0';
const KAFKA_CONTAINER_PORT = 9093;

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

export async function startTestcontainersStack(opts: {
  postgresSettings?: Record<string, string>;
  kafkaSettings?: Record<string, string>;
  readyTimeoutMs: number;
  log: (line: string) => void;
}): Promise<StackHandle> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const t0 = Date.now();

  const pgSettings: Record<string, string> = {
    wal_level: 'logical',
    max_wal_senders: '20',
    max_replication_slots: '20',
    max_connections: '200',
    fsync: 'off',
    synchronous_commit: 'on',
    full_page_writes: 'off',
    ...opts.postgresSettings,
  };
  const pgPort = await freePort();
  const kafkaPort = await freePort();

  let pgContainer: StartedPostgreSqlContainer | undefined;
  let kafkaContainer: StartedKafkaContainer | undefined;
  const stopAll = async () => {
    const results = await Promise.allSettled([pgContainer?.stop({ timeout: 10 }), kafkaContainer?.stop({ timeout: 10 })]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
  try {
    const kafkaEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.kafkaSettings ?? {})) kafkaEnv[confluentEnvName(k)] = v;
    [pgContainer, kafkaContainer] = await Promise.all([
      new PostgreSqlContainer(POSTGRES_IMAGE)
        .withDatabase('outbox_tail')
        .withUsername('postgres')
        .withPassword('postgres')
        .withExposedPorts({ container: 5432, host: pgPort })
        .withCommand(['postgres', ...Object.entries(pgSettings).flatMap(([k, v]) => ['-c', `${k}=${v}`])])
        .start(),
      new KafkaContainer(KAFKA_IMAGE)
        .withKraft()
        .withExposedPorts({ container: KAFKA_CONTAINER_PORT, host: kafkaPort })
        .withEnvironment({ KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true', KAFKA_NUM_PARTITIONS: '1', ...kafkaEnv })
        .start(),
    ]);
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw new Error(`testcontainers stack failed to start: ${(err as Error).message}`);
  }
  const pgC = pgContainer;
  const kC = kafkaContainer;

  const databaseUrl = pgC.getConnectionUri();
  const brokers = [`${kC.getHost()}:${kC.getMappedPort(KAFKA_CONTAINER_PORT)}`];
  const kafkaReady = async () => {
    await waitForKafka(brokers, opts.readyTimeoutMs);
    await waitForIdempotentProducer(brokers, opts.readyTimeoutMs);
  };
  await kafkaReady();
  const pgInfo = await queryPostgres(databaseUrl);
  let kafkaVersion = KAFKA_IMAGE;
  try {
    const res = await kC.exec(['kafka-topics', '--version']);
    const v = res.output.trim().split(/\s+/)[0];
    if (res.exitCode === 0 && v) kafkaVersion = `${v} (${KAFKA_IMAGE})`;
  } catch {
    /* keep the image name */
  }

  const postgres = new ContainerControl(pgC, 'postgres', async () => void (await waitForPostgres(databaseUrl, opts.readyTimeoutMs)), {
    fast: 'SIGINT', // postgres: SIGINT = fast shutdown
    immediate: 'SIGQUIT', // postgres: SIGQUIT = immediate shutdown (crash recovery on start)
  });
  const kafka = new ContainerControl(kC, 'kafka', kafkaReady, {
    fast: 'SIGKILL',
    immediate: 'SIGKILL',
  });
  await Promise.all([postgres.refreshPid(), kafka.refreshPid()]);
  opts.log(`testcontainers stack ready in ${Date.now() - t0} ms: ${POSTGRES_IMAGE} on ${pgC.getPort()}, ${KAFKA_IMAGE} on ${brokers[0]}`);

  let stopped: Promise<void> | undefined;
  return {
    provider: 'testcontainers',
    databaseUrl,
    brokers,
    versions: { postgres: pgInfo.version, kafka: kafkaVersion },
    postgres,
    kafka,
    workDirs: [],
    stop: () =>
      (stopped ??= stopAll().finally(() => {
        postgres.markStopped();
        kafka.markStopped();
      })),
  };
}
