/**
 * The ONLY place in dev/stack that reads environment variables, plus the pure
 * provider-selection logic. Callers bypass the environment by passing options
 * (or `env: {}`) to startStack.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ExternalStackConfig, StackProvider, StackProviderRequest } from './types.js';

export interface StackEnv {
  provider?: StackProviderRequest;
  external?: ExternalStackConfig;
  cacheDir: string;
  postgresBinDir?: string;
  javaHome?: string;
  /** PATH, to find initdb/pg_ctl outside Debian's layout. */
  path?: string;
  /** Testcontainers images (OUTBOX_TAIL_TC_POSTGRES_IMAGE, OUTBOX_TAIL_TC_KAFKA_IMAGE). */
  images: { postgres?: string; kafka?: string };
  /** Native Kafka version (OUTBOX_TAIL_KAFKA_VERSION), its jars fetched by the setup. */
  kafkaVersion?: string;
  /** Testcontainers network mode (OUTBOX_TAIL_TC_NETWORK_MODE), e.g. slirp4netns on Podman. */
  networkMode?: string;
}

const PROVIDERS: readonly StackProviderRequest[] = ['auto', 'external', 'testcontainers', 'native'];

export function parseProviderRequest(value: string, source = 'provider'): StackProviderRequest {
  const v = value.trim().toLowerCase();
  if ((PROVIDERS as readonly string[]).includes(v)) return v as StackProviderRequest;
  throw new Error(`${source}=${JSON.stringify(value)} is not one of ${PROVIDERS.join('|')}`);
}

export function parseBrokers(value: string): string[] {
  return value
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
}

/**
 * Reads OUTBOX_TAIL_STACK, OUTBOX_TAIL_TEST_DATABASE_URL, OUTBOX_TAIL_TEST_BROKERS,
 * OUTBOX_TAIL_CACHE_DIR, OUTBOX_TAIL_PG_BINDIR, OUTBOX_TAIL_TC_POSTGRES_IMAGE,
 * OUTBOX_TAIL_TC_KAFKA_IMAGE, OUTBOX_TAIL_TC_NETWORK_MODE, OUTBOX_TAIL_KAFKA_VERSION, JAVA_HOME, HOME and PATH.
 * Throws on a half-configured external stack (one of URL/brokers without the other).
 */
export function stackEnv(env: Record<string, string | undefined> = process.env): StackEnv {
  const get = (name: string) => {
    const v = env[name];
    return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
  };
  const result: StackEnv = {
    cacheDir: get('OUTBOX_TAIL_CACHE_DIR') ?? join(env.HOME ?? homedir(), '.cache', 'outbox-tail'),
    images: {},
  };
  const pgImage = get('OUTBOX_TAIL_TC_POSTGRES_IMAGE');
  if (pgImage !== undefined) result.images.postgres = pgImage;
  const kafkaImage = get('OUTBOX_TAIL_TC_KAFKA_IMAGE');
  if (kafkaImage !== undefined) result.images.kafka = kafkaImage;
  const kafkaVersion = get('OUTBOX_TAIL_KAFKA_VERSION');
  if (kafkaVersion !== undefined) result.kafkaVersion = kafkaVersion;
  const networkMode = get('OUTBOX_TAIL_TC_NETWORK_MODE');
  if (networkMode !== undefined) result.networkMode = networkMode;
  const provider = get('OUTBOX_TAIL_STACK');
  if (provider !== undefined) result.provider = parseProviderRequest(provider, 'OUTBOX_TAIL_STACK');
  const url = get('OUTBOX_TAIL_TEST_DATABASE_URL');
  const brokers = get('OUTBOX_TAIL_TEST_BROKERS');
  if ((url === undefined) !== (brokers === undefined)) {
    throw new Error(
      'external stack half configured: set both OUTBOX_TAIL_TEST_DATABASE_URL and OUTBOX_TAIL_TEST_BROKERS, or neither ' +
        `(got ${url === undefined ? 'only OUTBOX_TAIL_TEST_BROKERS' : 'only OUTBOX_TAIL_TEST_DATABASE_URL'})`,
    );
  }
  if (url !== undefined && brokers !== undefined) {
    const list = parseBrokers(brokers);
    if (list.length === 0) throw new Error('OUTBOX_TAIL_TEST_BROKERS lists no broker');
    result.external = { databaseUrl: url, brokers: list };
  }
  const pgBin = get('OUTBOX_TAIL_PG_BINDIR');
  if (pgBin !== undefined) result.postgresBinDir = pgBin;
  const javaHome = get('JAVA_HOME');
  if (javaHome !== undefined) result.javaHome = javaHome;
  const path = get('PATH');
  if (path !== undefined) result.path = path;
  return result;
}

/**
 * Picks the provider: an explicit request wins; `auto` = external when its
 * connection details are configured, else testcontainers when a container
 * runtime answers, else native. `probeContainerRuntime` is only called when needed.
 */
export async function chooseProvider(
  requested: StackProviderRequest,
  hasExternalConfig: boolean,
  probeContainerRuntime: () => Promise<boolean>,
): Promise<StackProvider> {
  switch (requested) {
    case 'external':
      if (!hasExternalConfig) {
        throw new Error(
          'provider "external" needs connection details: set OUTBOX_TAIL_TEST_DATABASE_URL and OUTBOX_TAIL_TEST_BROKERS (or pass options.external)',
        );
      }
      return 'external';
    case 'testcontainers':
    case 'native':
      return requested;
    case 'auto':
      if (hasExternalConfig) return 'external';
      return (await probeContainerRuntime()) ? 'testcontainers' : 'native';
  }
}
