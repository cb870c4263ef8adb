import { afterAll, afterEach, beforeAll } from 'vitest';
import { startStack, type StackConnection, type StackHandle } from '../../dev/stack/index.js';
import type { RelayVariant } from './broken-checkpointers.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { KafkaCollector } from './kafka-collector.js';
import { startRelay, type RelayProcess } from './relay-process.js';
import { getStack } from './stack.js';

export interface RelayTestbed {
  readonly stack: StackConnection;
  /** This file's own database (migrations applied), created before its tests. */
  readonly db: TestDatabase;
  /** Starts the real relay on `slot`; killed after the test. */
  relay(slot: string, options?: { variant?: RelayVariant; env?: Record<string, string>; args?: string[]; brokers?: string[] }): RelayProcess;
  /** Reads `topics` from the beginning; stopped after the test. */
  collect(topics: string[]): Promise<KafkaCollector>;
}

export interface RelayTestbedOptions {
  /**
   * Servers of this file's own (startStack(): the provider and versions the run's stack has) instead of the
   * shared ones, for tests that build a WAL shape no other session may write into: four test files at a
   * time write WAL on the shared server, and an exact shape then rarely occurs. The label names the file in the log.
   */
  ownStack?: string;
}

/**
 * Registers the hooks every relay test file needs: one database per file, and
 * since every relay of a file reads the same outbox table, every relay and
 * collector of a test is stopped after it.
 */
export function relayTestbed(options: RelayTestbedOptions = {}): RelayTestbed {
  let stack: StackConnection | undefined = options.ownStack === undefined ? getStack() : undefined;
  let own: StackHandle | undefined;
  let db: TestDatabase | undefined;
  const relays: RelayProcess[] = [];
  const collectors: KafkaCollector[] = [];
  const theStack = (): StackConnection => {
    if (!stack) throw new Error('relayTestbed: a stack of its own is started in beforeAll');
    return stack;
  };
  beforeAll(async () => {
    if (options.ownStack !== undefined) {
      own = await startStack({ log: (l) => console.log(`[stack] ${l}`) });
      stack = own;
      console.log(`stack: ${own.provider} postgres=${own.versions.postgres} kafka=${own.versions.kafka} (${options.ownStack}, a stack of its own)`);
    }
    db = await createTestDatabase(theStack());
  }, 180_000);
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.kill('SIGKILL')));
    await Promise.all(collectors.splice(0).map((c) => c.stop()));
  });
  afterAll(async () => {
    await db?.drop();
    await own?.stop();
  });
  return {
    get stack() {
      return theStack();
    },
    get db() {
      if (!db) throw new Error('relayTestbed: the database is created in beforeAll');
      return db;
    },
    relay(slot, options = {}) {
      const r = startRelay({
        databaseUrl: db!.url,
        brokers: options.brokers ?? theStack().brokers,
        slot,
        env: options.env ?? {},
        args: options.args ?? [],
        ...(options.variant ? { variant: options.variant } : {}),
      });
      relays.push(r);
      return r;
    },
    async collect(topics) {
      const c = await new KafkaCollector(theStack().brokers).start(topics);
      collectors.push(c);
      return c;
    },
  };
}
