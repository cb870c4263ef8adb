/** Readiness probes shared by all providers. */
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { redactUrl } from '../../src/shared/redact-secrets.js';
import { sleep } from './process.js';

// The relay's one copy, re-exported for the stack's other modules and users.
export { redactUrl };

export interface PostgresInfo {
  version: string;
  walLevel: string;
}

/** One connection attempt: server version and wal_level. */
export async function queryPostgres(url: string, connectTimeoutMs = 3000): Promise<PostgresInfo> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => {
    /* reported through the awaited calls */
  });
  try {
    await client.connect();
    const res = await client.query<{ server_version: string; wal_level: string }>(
      "SELECT current_setting('server_version') AS server_version, current_setting('wal_level') AS wal_level",
    );
    const row = res.rows[0];
    if (!row) throw new Error('no row from current_setting()');
    return { version: row.server_version.split(' ')[0] ?? row.server_version, walLevel: row.wal_level };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Retries queryPostgres until it succeeds or `timeoutMs` passed. */
export async function waitForPostgres(url: string, timeoutMs: number): Promise<PostgresInfo> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  do {
    try {
      return await queryPostgres(url, Math.min(3000, Math.max(500, deadline - Date.now())));
    } catch (err) {
      last = err;
      await sleep(200);
    }
  } while (Date.now() < deadline);
  throw new Error(`Postgres at ${redactUrl(url)} not reachable within ${timeoutMs} ms: ${(last as Error)?.message ?? last}`);
}

/** One metadata round trip with kafkajs (no retries, short timeouts). */
export async function probeKafka(brokers: string[], timeoutMs = 3000): Promise<void> {
  const kafka = createKafka({
    clientId: 'outbox-tail-stack-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 2000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  try {
    await admin.connect();
    await admin.listTopics();
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Retries probeKafka until it succeeds, `timeoutMs` passed, or `abort()`
 * returns a reason (e.g. the broker process exited).
 */
export async function waitForKafka(brokers: string[], timeoutMs: number, abort?: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  do {
    const reason = abort?.();
    if (reason !== undefined) throw new Error(reason);
    try {
      await probeKafka(brokers);
      return;
    } catch (err) {
      last = err;
      await sleep(250);
    }
  } while (Date.now() < deadline);
  throw new Error(`Kafka at ${brokers.join(',')} not ready within ${timeoutMs} ms: ${(last as Error)?.message ?? last}`);
}

/**
 * Waits until the broker hands out producer ids (an idempotent producer can
 * connect). Right after a (re)start Kafka answers metadata requests before
 * its producer-id manager is ready, and kafkajs logs the retriable
 * "coordinator is loading" at ERROR level for every client that comes too early.
 */
export async function waitForIdempotentProducer(brokers: string[], timeoutMs: number): Promise<void> {
  const kafka = createKafka({
    clientId: 'outbox-tail-stack-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 5000,
    retry: { retries: 0 },
  });
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  do {
    // kafkajs refuses an idempotent producer without retries
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 1, initialRetryTime: 100 } });
    try {
      await producer.connect();
      return;
    } catch (err) {
      last = err;
      await sleep(200);
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  } while (Date.now() < deadline);
  throw new Error(`Kafka at ${brokers.join(',')} gives no producer id within ${timeoutMs} ms: ${(last as Error)?.message ?? last}`);
}
