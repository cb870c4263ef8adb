/**
 * PostgreSQL and Kafka for the container tests, in ONE network namespace that
 * the relay container (or the systemd container) then joins
 * (`--network container:<id>`), so every address is 127.0.0.1 on both sides:
 *
 *   - the PostgreSQL container owns the namespace and publishes two ports on
 *     the host's 127.0.0.1: its own 5432 (as a free host port) and Kafka's;
 *   - Kafka listens on the SAME port number inside the namespace as on the
 *     host (a free host port P, published P -> P) and advertises
 *     127.0.0.1:P, which is then right from the host (the test's writer and
 *     collector) and from inside the namespace (the relay) alike.
 *
 * Why not the project's stack (dev/stack/testcontainers-stack.ts) with the
 * relay beside it: there each server has a namespace of its own, KafkaContainer
 * advertises 127.0.0.1:<host port> (nothing listens on it inside another
 * namespace), and under slirp4netns a container reaches the host only at
 * 10.0.2.2 with allow_host_loopback=true (off in our engine, and an address
 * outside loopback). A shared namespace needs no host change and works the
 * same on a Docker engine.
 *
 * Images: OUTBOX_TAIL_TC_POSTGRES_IMAGE / OUTBOX_TAIL_TC_KAFKA_IMAGE (default
 * postgres:17, confluentinc/cp-kafka:8.1.1), network mode of the namespace
 * owner OUTBOX_TAIL_TC_NETWORK_MODE (slirp4netns under bin/with-engine.sh).
 * Every container carries OWNER_LABEL, so a run killed before its cleanup is
 * reaped by the next one (removeOrphanContainers) or by bin/with-engine.sh.
 */
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { waitForIdempotentProducer, waitForKafka, waitForPostgres } from '../../../dev/stack/probe.js';
import { freePort } from '../../../dev/stack/process.js';
import {
  DEFAULT_KAFKA_IMAGE,
  DEFAULT_POSTGRES_IMAGE,
  OWNER_LABEL,
  loopbackPortBindings,
  removeOrphanContainers,
} from '../../../dev/stack/testcontainers-stack.js';

export interface Endpoints {
  databaseUrl: string;
  brokers: string[];
}

export interface NetnsStack {
  /** Network mode for a container that joins the namespace: `container:<postgres id>`. */
  networkMode: string;
  /** From the test process (host ports on 127.0.0.1). */
  host: Endpoints;
  /** From a container in the namespace. */
  inside: Endpoints;
  images: { postgres: string; kafka: string };
  /** Labels every container of the test should carry (owner pid). */
  labels: Record<string, string>;
  startedInMs: number;
  /** Stops and removes both containers (Kafka first: it lives in the owner's namespace). Idempotent. */
  stop(): Promise<void>;
}

const PG_PORT = 5432;
/** KRaft controller listener: inside the namespace only, never published. */
const CONTROLLER_PORT = 9094;
const KRAFT_CLUSTER_ID = 'b3V0Ym94LXRhaWwtdGVzdA';

export function containerLabels(): Record<string, string> {
  return { [OWNER_LABEL]: String(process.pid) };
}

function log(line: string): void {
  process.stderr.write(`[containers] ${line}\n`);
}

export async function startNetnsStack(opts: { readyTimeoutMs?: number } = {}): Promise<NetnsStack> {
  const t0 = Date.now();
  const readyTimeoutMs = opts.readyTimeoutMs ?? 90_000;
  const images = {
    postgres: process.env.OUTBOX_TAIL_TC_POSTGRES_IMAGE || DEFAULT_POSTGRES_IMAGE,
    kafka: process.env.OUTBOX_TAIL_TC_KAFKA_IMAGE || DEFAULT_KAFKA_IMAGE,
  };
  const networkMode = process.env.OUTBOX_TAIL_TC_NETWORK_MODE || 'bridge';
  const labels = containerLabels();
  await removeOrphanContainers(log);
  const pgHostPort = await freePort();
  // The same number inside and outside: see the file comment.
  const kafkaPort = await freePort();

  class NamespaceOwnerPostgres extends GenericContainer {
    protected override async beforeContainerCreated(): Promise<void> {
      this.hostConfig.PortBindings = loopbackPortBindings({ [PG_PORT]: pgHostPort, [kafkaPort]: kafkaPort });
    }
  }

  let pg: StartedTestContainer | undefined;
  let kafka: StartedTestContainer | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      // The joined container first: the owner's namespace must outlive it.
      // (Testcontainers' timeout is in ms; throw-away servers need no grace.)
      await kafka?.stop({ timeout: 2_000 }).catch((e) => log(`kafka stop: ${e}`));
      await pg?.stop({ timeout: 2_000 }).catch((e) => log(`postgres stop: ${e}`));
    })());
  try {
    pg = await new NamespaceOwnerPostgres(images.postgres)
      .withNetworkMode(networkMode)
      .withLabels(labels)
      .withExposedPorts({ container: PG_PORT, host: pgHostPort }, { container: kafkaPort, host: kafkaPort })
      .withEnvironment({ POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: 'postgres', POSTGRES_DB: 'outbox_tail' })
      .withCommand(['postgres', '-c', 'wal_level=logical', '-c', 'max_wal_senders=10', '-c', 'max_replication_slots=10', '-c', 'fsync=off'])
      // Not the listening-ports wait: Kafka's port is published here but served by the next container.
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .withStartupTimeout(readyTimeoutMs)
      .start();
    const host: Endpoints = {
      databaseUrl: `postgres://postgres:postgres@127.0.0.1:${pgHostPort}/outbox_tail`,
      brokers: [`127.0.0.1:${kafkaPort}`],
    };
    const inside: Endpoints = {
      databaseUrl: `postgres://postgres:postgres@127.0.0.1:${PG_PORT}/outbox_tail`,
      brokers: [`127.0.0.1:${kafkaPort}`],
    };
    const joined = `container:${pg.getId()}`;
    kafka = await new GenericContainer(images.kafka)
      .withNetworkMode(joined)
      .withLabels(labels)
      .withEnvironment({
        CLUSTER_ID: KRAFT_CLUSTER_ID,
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${kafkaPort},CONTROLLER://127.0.0.1:${CONTROLLER_PORT}`,
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${kafkaPort}`,
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_CONTROLLER_QUORUM_VOTERS: `1@127.0.0.1:${CONTROLLER_PORT}`,
        KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
        KAFKA_NUM_PARTITIONS: '1',
      })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .withStartupTimeout(readyTimeoutMs)
      .start();
    await waitForPostgres(host.databaseUrl, readyTimeoutMs);
    await waitForKafka(host.brokers, readyTimeoutMs);
    await waitForIdempotentProducer(host.brokers, readyTimeoutMs);
    const startedInMs = Date.now() - t0;
    log(
      `postgres (${images.postgres}) + kafka (${images.kafka}) in one network namespace, ready in ${startedInMs} ms: host ${host.databaseUrl.replace(/:[^:@/]*@/, ':***@')} ${host.brokers[0]}`,
    );
    return { networkMode: joined, host, inside, images, labels, startedInMs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Exit code and state of a container (stopped or running) through the engine's API. */
export async function inspectContainer(id: string): Promise<{ running: boolean; exitCode: number; health?: string; healthcheck?: string[] }> {
  const client = await getContainerRuntimeClient();
  const info = await client.container.inspect(client.container.getById(id));
  return {
    running: info.State.Running,
    exitCode: info.State.ExitCode,
    ...(info.State.Health?.Status ? { health: info.State.Health.Status } : {}),
    ...(info.Config.Healthcheck?.Test ? { healthcheck: info.Config.Healthcheck.Test } : {}),
  };
}

/**
 * The whole log of a container (running or stopped), stdout and stderr. A
 * follow stream (withLogConsumer) can end before the last lines of a
 * stopping container arrive; this reads them from the engine afterwards.
 */
export async function containerLogs(id: string): Promise<string> {
  const client = await getContainerRuntimeClient();
  const raw = (await client.container.dockerode.getContainer(id).logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
  // Without a TTY the engine multiplexes: 8-byte frame headers [stream, 0, 0, 0, size (u32 BE)].
  const out: Buffer[] = [];
  let i = 0;
  while (i + 8 <= raw.length && raw[i]! <= 2 && raw[i + 1] === 0 && raw[i + 2] === 0 && raw[i + 3] === 0) {
    const size = raw.readUInt32BE(i + 4);
    out.push(raw.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  if (i < raw.length) out.push(raw.subarray(i)); // not multiplexed (TTY), or a tail
  return Buffer.concat(out).toString('utf8');
}

/** Removes a container by id (stopped or not); never throws. */
export async function removeContainer(id: string): Promise<void> {
  try {
    const client = await getContainerRuntimeClient();
    await client.container.getById(id).remove({ force: true, v: true });
  } catch {
    // gone already
  }
}

/** Ids of the containers this process created that still exist. */
export async function ownContainers(): Promise<string[]> {
  const client = await getContainerRuntimeClient();
  // container.list() shows running containers only: ask for all of them.
  const all = await client.container.dockerode.listContainers({ all: true, filters: { label: [`${OWNER_LABEL}=${process.pid}`] } });
  return all.map((c) => c.Id);
}
