/**
 * The stack's own contract: isolated stacks side by side, fault hooks that
 * really kill and restart the servers, and a stop() that leaves nothing behind.
 *
 * The fault hooks are exercised on a SECOND stack started here (never on the
 * run's shared stack, which other files use concurrently). With an external
 * run stack nothing can be started or killed: those tests then prove that the
 * hooks refuse clearly instead.
 */
import { existsSync } from 'node:fs';
import { logLevel, Partitioners } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, probeKafka, queryPostgres, startStack, type StackHandle } from '../../dev/stack/index.js';
import { childrenOf } from '../../dev/stack/process.js';
import { uniqueName } from '../support/database.js';
import { kafkaFor, readTopic } from '../support/kafka.js';
import { getStack } from '../support/stack.js';

const run = getStack();
let second: StackHandle;

beforeAll(async () => {
  second =
    run.provider === 'external'
      ? await startStack({ provider: 'external', external: { databaseUrl: run.databaseUrl, brokers: run.brokers }, env: {} })
      : await startStack({ provider: run.provider });
});

afterAll(async () => {
  await second?.stop();
});

const port = (hostPort: string) => Number(hostPort.split(':').at(-1));

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

async function produceAndReadBack(stack: StackHandle, label: string): Promise<void> {
  // silent: retriable "coordinator is loading" errors right after the restart
  const kafka = kafkaFor(stack, `lifecycle-${label}`, { logLevel: logLevel.NOTHING });
  const topic = uniqueName(`lifecycle_${label}`);
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: label, headers: { label } }] });
  } finally {
    await producer.disconnect();
  }
  const [message] = await readTopic(stack, topic, 1);
  expect(message?.value).toBe(label);
}

describe(`stack lifecycle (run provider: ${run.provider})`, () => {
  it('gives the second stack the provider of the run, or refuses fault hooks on an external stack', async () => {
    expect(['native', 'testcontainers', 'external']).toContain(run.provider);
    expect(second.provider).toBe(run.provider);
    if (run.provider === 'external') {
      await expect(second.kafka.kill()).rejects.toThrow(/not supported with external stack/);
      await expect(second.postgres.restart('immediate')).rejects.toThrow(/not supported with external stack/);
      expect(second.postgres.pid()).toBeUndefined();
    }
  });

  it("runs a second stack at the same time as the run's stack, on distinct ports and temp dirs", async () => {
    const both = [run, second];
    for (const s of both) {
      const info = await queryPostgres(s.databaseUrl);
      expect(info.walLevel).toBe('logical');
      await probeKafka(s.brokers);
    }
    if (run.provider === 'external') return; // the same external servers: nothing distinct to compare
    expect(port(new URL(second.databaseUrl).host)).not.toBe(port(new URL(run.databaseUrl).host));
    expect(second.brokers.map(port)).not.toContain(port(run.brokers[0]!));
    if (run.provider === 'native') {
      expect(second.workDirs).toHaveLength(2);
      for (const dir of second.workDirs) expect(existsSync(dir)).toBe(true);
    }
  });

  it('brings Kafka back on the same port after kill -9 and start(), and an idempotent producer works again', async () => {
    if (run.provider === 'external') {
      await expect(second.kafka.start()).rejects.toThrow(/not supported with external stack/);
      return;
    }
    await produceAndReadBack(second, 'before_kill');
    const pid = second.kafka.pid();
    expect(pid).toBeDefined();
    await second.kafka.kill();
    expect(second.kafka.pid()).toBeUndefined();
    if (run.provider === 'native') expect(isAlive(pid!)).toBe(false);
    await expect(probeKafka(second.brokers, 1000)).rejects.toThrow();
    await second.kafka.start();
    expect(second.kafka.pid()).toBeDefined();
    await produceAndReadBack(second, 'after_restart');
  });

  it('recovers Postgres after an immediate-mode restart: committed rows survive and queries work on the same URL', async () => {
    if (run.provider === 'external') {
      await expect(second.postgres.restart('immediate')).rejects.toThrow(/not supported with external stack/);
      return;
    }
    await query(second.databaseUrl, 'CREATE TABLE IF NOT EXISTS survives (n int)');
    await query(second.databaseUrl, 'INSERT INTO survives VALUES (42)');
    const before = second.postgres.pid();
    await second.postgres.restart('immediate');
    const after = second.postgres.pid();
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    expect(await query<{ n: number }>(second.databaseUrl, 'SELECT n FROM survives')).toEqual([{ n: 42 }]);

    // kill -9 of the postmaster and its children, then start() on the same data dir
    await second.postgres.kill();
    expect(second.postgres.pid()).toBeUndefined();
    await second.postgres.start();
    expect(await query<{ n: number }>(second.databaseUrl, 'SELECT n FROM survives')).toEqual([{ n: 42 }]);
  });

  it('stop() leaves no process and no temp dir behind, and can be called twice', async () => {
    if (run.provider === 'external') {
      await second.stop();
      await expect(second.postgres.stop()).rejects.toThrow(/not supported with external stack/);
      return;
    }
    const pgPid = second.postgres.pid();
    const kafkaPid = second.kafka.pid();
    expect(pgPid).toBeDefined();
    expect(kafkaPid).toBeDefined();
    const processes = run.provider === 'native' ? [pgPid!, ...childrenOf(pgPid!), kafkaPid!] : [];
    if (run.provider === 'native') expect(processes.length).toBeGreaterThan(2); // postmaster children exist

    await second.stop();
    await second.stop();

    expect(second.postgres.pid()).toBeUndefined();
    expect(second.kafka.pid()).toBeUndefined();
    expect(processes.filter(isAlive)).toEqual([]);
    for (const dir of second.workDirs) expect(existsSync(dir), dir).toBe(false);
    await expect(queryPostgres(second.databaseUrl, 1000)).rejects.toThrow();
    await expect(probeKafka(second.brokers, 1000)).rejects.toThrow();
  });
});
