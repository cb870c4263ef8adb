import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RelayVariant } from './broken-checkpointers.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { KafkaCollector } from './kafka-collector.js';
import { startRelay, type RelayProcess } from './relay-process.js';
import { getStack } from './stack.js';

export interface RelayTestbed {
  readonly stack: ReturnType<typeof getStack>;
  /** This file's own database (migrations applied), created before its tests. */
  readonly db: TestDatabase;
  /** Starts the real relay on `slot`; killed after the test. */
  relay(slot: string, options?: { variant?: RelayVariant; env?: Record<string, string>; args?: string[]; brokers?: string[] }): RelayProcess;
  /** Reads `topics` from the beginning; stopped after the test. */
  collect(topics: string[]): Promise<KafkaCollector>;
}

/**
 * Registers the hooks every relay test file needs: one database per file, and
 * since every relay of a file reads the same outbox table, every relay and
 * collector of a test is stopped after it.
 */
export function relayTestbed(): RelayTestbed {
  const stack = getStack();
  let db: TestDatabase | undefined;
  const relays: RelayProcess[] = [];
  const collectors: KafkaCollector[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(stack);
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.kill('SIGKILL')));
    await Promise.all(collectors.splice(0).map((c) => c.stop()));
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    stack,
    get db() {
      if (!db) throw new Error('relayTestbed: the database is created in beforeAll');
      return db;
    },
    relay(slot, options = {}) {
      const r = startRelay({
        databaseUrl: db!.url,
        brokers: options.brokers ?? stack.brokers,
        slot,
        env: options.env ?? {},
        args: options.args ?? [],
        ...(options.variant ? { variant: options.variant } : {}),
      });
      relays.push(r);
      return r;
    },
    async collect(topics) {
      const c = await new KafkaCollector(stack.brokers).start(topics);
      collectors.push(c);
      return c;
    },
  };
}
