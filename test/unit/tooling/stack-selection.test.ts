import { describe, expect, it, vi } from 'vitest';
import { chooseProvider, parseBrokers, redactUrl, stackEnv } from '../../../dev/stack/index.js';
import { parseJavaMajor, randomClusterId } from '../../../dev/stack/native-kafka.js';
import { confluentEnvName } from '../../../dev/stack/testcontainers-stack.js';

const neverProbe = () => Promise.reject(new Error('the container runtime must not be probed'));

describe('chooseProvider', () => {
  it('uses an explicitly requested native or testcontainers provider without probing for a container runtime', async () => {
    const probe = vi.fn(neverProbe);
    expect(await chooseProvider('native', false, probe)).toBe('native');
    expect(await chooseProvider('native', true, probe)).toBe('native');
    expect(await chooseProvider('testcontainers', true, probe)).toBe('testcontainers');
    expect(probe).not.toHaveBeenCalled();
  });

  it('auto picks external when connection details are configured, without probing', async () => {
    const probe = vi.fn(neverProbe);
    expect(await chooseProvider('auto', true, probe)).toBe('external');
    expect(probe).not.toHaveBeenCalled();
  });

  it('auto picks testcontainers when a container runtime answers, native when it does not', async () => {
    expect(await chooseProvider('auto', false, async () => true)).toBe('testcontainers');
    expect(await chooseProvider('auto', false, async () => false)).toBe('native');
  });

  it('rejects an external request without connection details, naming the variables to set', async () => {
    await expect(chooseProvider('external', false, neverProbe)).rejects.toThrow(/OUTBOX_TAIL_TEST_DATABASE_URL and OUTBOX_TAIL_TEST_BROKERS/);
  });
});

describe('stackEnv', () => {
  it('reads nothing but defaults from an empty environment', () => {
    expect(stackEnv({ HOME: '/home/u' })).toEqual({ cacheDir: '/home/u/.cache/outbox-tail', images: {} });
  });

  it('reads the provider, external servers, cache dir, Postgres bin dir, JAVA_HOME, Kafka version and container settings', () => {
    const env = stackEnv({
      OUTBOX_TAIL_STACK: ' External ',
      OUTBOX_TAIL_TEST_DATABASE_URL: 'postgres://u:p@db:5432/x',
      OUTBOX_TAIL_TEST_BROKERS: 'k1:9092, k2:9092,,',
      OUTBOX_TAIL_CACHE_DIR: '/cache',
      OUTBOX_TAIL_PG_BINDIR: '/pg/bin',
      JAVA_HOME: '/jdk',
      PATH: '/usr/bin',
      OUTBOX_TAIL_KAFKA_VERSION: '3.9.1',
      OUTBOX_TAIL_TC_POSTGRES_IMAGE: 'localhost/outbox-tail/postgres:18',
      OUTBOX_TAIL_TC_KAFKA_IMAGE: 'localhost/outbox-tail/cp-kafka:8.1.1',
      OUTBOX_TAIL_TC_NETWORK_MODE: 'slirp4netns',
    });
    expect(env).toEqual({
      provider: 'external',
      external: { databaseUrl: 'postgres://u:p@db:5432/x', brokers: ['k1:9092', 'k2:9092'] },
      cacheDir: '/cache',
      postgresBinDir: '/pg/bin',
      javaHome: '/jdk',
      path: '/usr/bin',
      kafkaVersion: '3.9.1',
      images: { postgres: 'localhost/outbox-tail/postgres:18', kafka: 'localhost/outbox-tail/cp-kafka:8.1.1' },
      networkMode: 'slirp4netns',
    });
  });

  it('treats empty variables as unset', () => {
    expect(stackEnv({ HOME: '/h', OUTBOX_TAIL_STACK: '', OUTBOX_TAIL_TEST_DATABASE_URL: ' ', OUTBOX_TAIL_TEST_BROKERS: '' })).toEqual({
      cacheDir: '/h/.cache/outbox-tail',
      images: {},
    });
  });

  it('rejects an unknown OUTBOX_TAIL_STACK value', () => {
    expect(() => stackEnv({ OUTBOX_TAIL_STACK: 'docker' })).toThrow(/OUTBOX_TAIL_STACK="docker" is not one of auto\|external\|testcontainers\|native/);
  });

  it('rejects a half-configured external stack instead of silently starting another one', () => {
    expect(() => stackEnv({ OUTBOX_TAIL_TEST_DATABASE_URL: 'postgres://x' })).toThrow(/only OUTBOX_TAIL_TEST_DATABASE_URL/);
    expect(() => stackEnv({ OUTBOX_TAIL_TEST_BROKERS: 'k:9092' })).toThrow(/only OUTBOX_TAIL_TEST_BROKERS/);
    expect(() => stackEnv({ OUTBOX_TAIL_TEST_DATABASE_URL: 'postgres://x', OUTBOX_TAIL_TEST_BROKERS: ' , ' })).toThrow(/lists no broker/);
  });
});

describe('stack helpers', () => {
  it('parses a comma-separated broker list', () => {
    expect(parseBrokers(' a:1 ,b:2,, ')).toEqual(['a:1', 'b:2']);
  });

  it('never shows a database password in messages', () => {
    expect(redactUrl('postgresql://app:s3cret@db:5432/x')).toBe('postgresql://app:***@db:5432/x');
    expect(redactUrl('postgresql://postgres@127.0.0.1:5432/x')).toBe('postgresql://postgres@127.0.0.1:5432/x');
  });

  it('reads the Java major version from old and new `java -version` formats', () => {
    expect(parseJavaMajor('openjdk version "17.0.15" 2025-04-15')).toBe(17);
    expect(parseJavaMajor('java version "1.8.0_392"')).toBe(8);
    expect(parseJavaMajor('openjdk version "21" 2023-09-19')).toBe(21);
    expect(parseJavaMajor('bash: java: command not found')).toBeUndefined();
  });

  it('makes Kafka cluster ids of 16 random bytes in unpadded base64url, never starting with a dash', () => {
    for (let i = 0; i < 200; i++) {
      const id = randomClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
  });

  it("maps Kafka properties to cp-kafka's environment variable names", () => {
    expect(confluentEnvName('log.retention.ms')).toBe('KAFKA_LOG_RETENTION_MS');
    expect(confluentEnvName('foo_bar.baz-qux')).toBe('KAFKA_FOO__BAR_BAZ___QUX');
  });
});
