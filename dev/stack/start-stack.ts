/**
 * startStack(): a PostgreSQL (wal_level=logical) + Kafka pair for tests, the
 * demo and benchmarks, from one of three providers:
 *   external        servers given by OUTBOX_TAIL_TEST_DATABASE_URL / OUTBOX_TAIL_TEST_BROKERS
 *   testcontainers  containers on a local Docker engine
 *   native          local Postgres binaries + Kafka jars cached by `npm run setup`
 */
import { join } from 'node:path';
import { chooseProvider, stackEnv, type StackEnv } from './env.js';
import { connectExternalStack } from './external-stack.js';
import { checkJava, findKafkaJars, NativeKafka } from './native-kafka.js';
import { findPostgresBinDir, NativePostgres } from './native-postgres.js';
import { containerRuntimeAvailable, startTestcontainersStack } from './testcontainers-stack.js';
import type { StackHandle, StartStackOptions } from './types.js';

export type { StackHandle, StartStackOptions } from './types.js';

const DEFAULT_READY_TIMEOUT_MS = 60_000;
const DEFAULT_RUNTIME_PROBE_TIMEOUT_MS = 5_000;

export async function startStack(options: StartStackOptions = {}): Promise<StackHandle> {
  const env = stackEnv(options.env);
  const log = options.log ?? (() => undefined);
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const external = options.external ?? env.external;
  const requested = options.provider ?? env.provider ?? 'auto';
  const provider = await chooseProvider(requested, external !== undefined, () =>
    containerRuntimeAvailable(options.runtimeProbeTimeoutMs ?? DEFAULT_RUNTIME_PROBE_TIMEOUT_MS),
  );
  log(`stack provider: ${provider}${requested === 'auto' ? ' (auto)' : ''}`);
  if (provider !== 'native' && options.kafkaFormatArgs !== undefined) {
    throw new Error(`kafkaFormatArgs needs the native provider (got ${provider})`);
  }
  if (provider === 'external' && options.kafkaExtraListeners !== undefined) {
    throw new Error('kafkaExtraListeners needs a stack it starts (native or testcontainers), not an external one');
  }
  if (provider === 'testcontainers' && Object.values(options.kafkaExtraListeners ?? {}).some((p) => p !== 'PLAINTEXT')) {
    throw new Error('testcontainers: extra Kafka listeners can only be PLAINTEXT (TLS and SASL listeners need the native provider)');
  }

  switch (provider) {
    case 'external':
      if (!external) throw new Error('provider "external" without connection details');
      return connectExternalStack(external, log);
    case 'testcontainers':
      return startTestcontainersStack({
        postgresSettings: options.postgresSettings,
        kafkaSettings: options.kafkaSettings,
        images: { ...env.images, ...options.images },
        ...(options.kafkaExtraListeners ? { kafkaExtraListeners: Object.keys(options.kafkaExtraListeners) } : {}),
        ...(options.kafkaAdvertisedListeners ? { kafkaAdvertisedListeners: options.kafkaAdvertisedListeners } : {}),
        ...(env.networkMode !== undefined ? { networkMode: env.networkMode } : {}),
        readyTimeoutMs,
        log,
      });
    case 'native':
      return startNativeStack(options, env, readyTimeoutMs, log);
  }
}

async function startNativeStack(options: StartStackOptions, env: StackEnv, readyTimeoutMs: number, log: (line: string) => void): Promise<StackHandle> {
  const t0 = Date.now();
  // Check every prerequisite before starting anything, so a missing piece is
  // reported without a half-started stack.
  const javaBin = options.javaBin ?? (env.javaHome !== undefined ? join(env.javaHome, 'bin', 'java') : 'java');
  const [binDir, jars] = await Promise.all([
    findPostgresBinDir(options.postgresBinDir ?? env.postgresBinDir, env.path),
    findKafkaJars(options.cacheDir ?? env.cacheDir, options.kafkaVersion ?? env.kafkaVersion),
    checkJava(javaBin),
  ]);

  const [pgResult, kafkaResult] = await Promise.allSettled([
    NativePostgres.start({ binDir, settings: options.postgresSettings, readyTimeoutMs, log }),
    NativeKafka.start({
      javaBin,
      libDir: jars.libDir,
      version: jars.version,
      settings: options.kafkaSettings,
      extraListeners: options.kafkaExtraListeners,
      advertisedListeners: options.kafkaAdvertisedListeners,
      formatArgs: options.kafkaFormatArgs,
      ...(options.kafkaQuickStart ? { quickStart: true } : {}),
      readyTimeoutMs,
      log,
    }),
  ]);
  if (pgResult.status === 'rejected' || kafkaResult.status === 'rejected') {
    await Promise.allSettled([
      pgResult.status === 'fulfilled' ? pgResult.value.destroy() : undefined,
      kafkaResult.status === 'fulfilled' ? kafkaResult.value.destroy() : undefined,
    ]);
    const errors = [pgResult, kafkaResult]
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => (r.reason instanceof Error ? r.reason.message : String(r.reason)));
    throw new Error(`native stack failed to start:\n${errors.join('\n')}`);
  }
  const postgres = pgResult.value;
  const kafka = kafkaResult.value;
  log(`native stack ready in ${Date.now() - t0} ms`);

  let stopped: Promise<void> | undefined;
  return {
    provider: 'native',
    databaseUrl: postgres.url,
    brokers: kafka.brokers,
    versions: { postgres: postgres.version, kafka: kafka.version },
    postgres,
    kafka,
    workDirs: [postgres.root, kafka.root],
    ...(options.kafkaExtraListeners ? { kafkaListeners: kafka.listenerBrokers } : {}),
    stop: () =>
      (stopped ??= (async () => {
        const results = await Promise.allSettled([kafka.destroy(), postgres.destroy()]);
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed.length > 0) throw new Error(`stack stop failed: ${failed.map((f) => String(f.reason)).join('; ')}`);
      })()),
  };
}
