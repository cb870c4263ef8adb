/** Servers someone else runs (CI services, a dev's own Postgres/Kafka): no fault hooks. */
import { probeKafka, queryPostgres, redactUrl } from './probe.js';
import type { ExternalStackConfig, ServerControl, StackHandle } from './types.js';

function unsupported(server: string): ServerControl {
  const fail = (hook: string) => async (): Promise<never> => {
    throw new Error(
      `${server}.${hook}() is not supported with external stack (OUTBOX_TAIL_STACK=external): ` +
        'fault hooks need a stack this process started (native or testcontainers)',
    );
  };
  return { kill: fail('kill'), stop: fail('stop'), start: fail('start'), restart: fail('restart'), pid: () => undefined };
}

/** Checks that both servers answer, and that Postgres has wal_level=logical. */
export async function connectExternalStack(config: ExternalStackConfig, log: (line: string) => void): Promise<StackHandle> {
  const where = redactUrl(config.databaseUrl);
  let pg;
  try {
    pg = await queryPostgres(config.databaseUrl, 5000);
  } catch (err) {
    throw new Error(`external stack: cannot reach Postgres at ${where} (OUTBOX_TAIL_TEST_DATABASE_URL): ${(err as Error).message || String(err)}`, {
      cause: err,
    });
  }
  if (pg.walLevel !== 'logical') {
    throw new Error(
      `external stack: Postgres at ${where} has wal_level=${pg.walLevel}; logical replication needs wal_level=logical (restart it with -c wal_level=logical)`,
    );
  }
  try {
    await probeKafka(config.brokers, 5000);
  } catch (err) {
    throw new Error(`external stack: cannot reach Kafka at ${config.brokers.join(',')} (OUTBOX_TAIL_TEST_BROKERS): ${(err as Error).message || String(err)}`, {
      cause: err,
    });
  }
  log(`external stack: postgres ${pg.version} at ${where}, kafka at ${config.brokers.join(',')}`);
  return {
    provider: 'external',
    databaseUrl: config.databaseUrl,
    brokers: [...config.brokers],
    versions: { postgres: pg.version, kafka: 'external' },
    postgres: unsupported('postgres'),
    kafka: unsupported('kafka'),
    workDirs: [],
    stop: async () => undefined,
  };
}
