import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp-dir.js';
import { envName, flagName } from '../../../src/config/options.js';
import { redactConfig, resolveConfig } from '../../../src/config/resolve-config.js';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { collectWindow } from '../../../src/commands/verify/verify-outbox.js';

const dir = tempDir('outbox-tail-config-');
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('config resolution', () => {
  it('applies defaults from the one schema', () => {
    const c = resolveConfig({});
    expect(c).toMatchObject({
      publication: 'outbox_tail',
      table: 'public.outbox',
      topic: 'outbox.event.{aggregate_type}',
      onOversize: 'fail',
      createSlot: false,
      brokers: ['localhost:9092'],
    });
  });

  it('takes flags over env over file over defaults', () => {
    const yaml = file('c.yaml', 'slot: from_file\npublication: pub_file\nclient-id: file-client\nbatchMaxMessages: 10\n');
    const env = { OUTBOX_TAIL_SLOT: 'from_env', OUTBOX_TAIL_PUBLICATION: 'pub_env' };
    const c = resolveConfig({ configFile: yaml, env, flags: { slot: 'from_flag' } });
    expect(c.slot).toBe('from_flag');
    expect(c.publication).toBe('pub_env');
    expect(c.clientId).toBe('file-client');
    expect(c.batchMaxMessages).toBe(10);
    expect(c.topic).toBe('outbox.event.{aggregate_type}');
  });

  it('reads DATABASE_URL when OUTBOX_TAIL_DATABASE_URL is absent, and prefers the latter', () => {
    expect(resolveConfig({ env: { DATABASE_URL: 'postgres://a/b' } }).databaseUrl).toBe('postgres://a/b');
    expect(resolveConfig({ env: { DATABASE_URL: 'postgres://a/b', OUTBOX_TAIL_DATABASE_URL: 'postgres://c/d' } }).databaseUrl).toBe('postgres://c/d');
  });

  it('coerces env strings: numbers, booleans and comma lists', () => {
    const c = resolveConfig({ env: { OUTBOX_TAIL_BATCH_MAX_BYTES: '2048', OUTBOX_TAIL_CREATE_SLOT: 'true', OUTBOX_TAIL_BROKERS: 'k1:9092, k2:9092' } });
    expect(c.batchMaxBytes).toBe(2048);
    expect(c.createSlot).toBe(true);
    expect(c.brokers).toEqual(['k1:9092', 'k2:9092']);
  });

  it('has failoverSlot off by default, on with --failover-slot or OUTBOX_TAIL_FAILOVER_SLOT', () => {
    expect(resolveConfig({}).failoverSlot).toBe(false);
    expect(resolveConfig({ env: { OUTBOX_TAIL_FAILOVER_SLOT: 'true' } }).failoverSlot).toBe(true);
    expect(resolveConfig({ flags: { failoverSlot: true } }).failoverSlot).toBe(true);
    expect(envName('failoverSlot')).toBe('OUTBOX_TAIL_FAILOVER_SLOT');
    expect(flagName('failoverSlot')).toBe('failover-slot');
  });

  it('names each bad field with its flag, env var and where the value came from', () => {
    let error: unknown;
    try {
      resolveConfig({ env: { OUTBOX_TAIL_BATCH_MAX_MESSAGES: 'lots' }, flags: { slot: 'Bad-Slot', onOversize: 'dead-letter' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OutboxTailError);
    const e = error as OutboxTailError;
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('--slot / OUTBOX_TAIL_SLOT');
    expect(e.message).toContain('given "Bad-Slot" by flag --slot');
    expect(e.message).toContain('--batch-max-messages / OUTBOX_TAIL_BATCH_MAX_MESSAGES');
    expect(e.message).toContain('by env OUTBOX_TAIL_BATCH_MAX_MESSAGES');
  });

  it('requires a dead-letter topic when a policy is dead-letter', () => {
    expect(() => resolveConfig({ flags: { onOversize: 'dead-letter' } })).toThrow(
      '--dead-letter-topic / OUTBOX_TAIL_DEAD_LETTER_TOPIC: required when onOversize is dead-letter',
    );
  });

  it('halts on a lost slot by default, and refuses automatic recovery with exactly-once delivery', () => {
    expect(resolveConfig({})).toMatchObject({ onSlotLost: 'halt', recoverMarginMs: 3_600_000 });
    expect(resolveConfig({ env: { OUTBOX_TAIL_ON_SLOT_LOST: 'recover' } }).onSlotLost).toBe('recover');
    expect(() => resolveConfig({ env: { OUTBOX_TAIL_ON_SLOT_LOST: 'recover', OUTBOX_TAIL_DELIVERY: 'exactly-once' } })).toThrow(
      /recover is not automatic with exactly-once delivery/,
    );
  });

  it('sends all six standard headers by default; --record-headers narrows them, never without id or with an unknown name', () => {
    expect(resolveConfig({}).recordHeaders).toEqual(['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at', 'commit_lsn']);
    expect(resolveConfig({ env: { OUTBOX_TAIL_RECORD_HEADERS: 'id, created_at,id' } }).recordHeaders).toEqual(['id', 'created_at']);
    expect(resolveConfig({ flags: { recordHeaders: ['id'] } }).recordHeaders).toEqual(['id']);
    expect(() => resolveConfig({ flags: { recordHeaders: ['event_type'] } })).toThrow(/--record-headers \/ OUTBOX_TAIL_RECORD_HEADERS: must include id/);
    expect(() => resolveConfig({ env: { OUTBOX_TAIL_RECORD_HEADERS: 'id,trace' } })).toThrow(
      '--record-headers / OUTBOX_TAIL_RECORD_HEADERS: Invalid option: expected one of "id"|"event_type"|"aggregate_type"|"aggregate_id"|"created_at"|"commit_lsn" (given "id,trace" by env OUTBOX_TAIL_RECORD_HEADERS)',
    );
  });

  it('verify and replay --only-missing refuse, before touching the database, a header set without created_at', async () => {
    const config = resolveConfig({ env: { OUTBOX_TAIL_RECORD_HEADERS: 'id,event_type' } });
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the database was used');
        },
      },
    ) as never;
    const refused = await collectWindow(untouchable, config, { window: { fromMs: 0, toMs: 1 }, marginMs: 0 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutboxTailError);
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID', exitCode: 2 });
    expect((refused as Error).message).toContain('--record-headers leaves out created_at');
  });

  it('rejects unknown keys in a config file and unknown topic placeholders', () => {
    expect(() => resolveConfig({ configFile: file('u.json', '{"slott": "x"}') })).toThrow(/unknown option\(s\) slott/);
    expect(() => resolveConfig({ flags: { topic: 'x.{aggregate}' } })).toThrow(/unknown placeholder/);
  });

  it('says which file is unreadable or invalid', () => {
    expect(() => resolveConfig({ configFile: join(dir, 'missing.yaml') })).toThrow(/cannot read config file .*missing.yaml/);
    expect(() => resolveConfig({ configFile: file('bad.json', '{') })).toThrow(/is not valid JSON/);
  });

  it('redacts the database password before logging', () => {
    const c = resolveConfig({ flags: { databaseUrl: 'postgres://relay:s3cret@db:5432/app' } });
    expect(JSON.stringify(redactConfig(c))).not.toContain('s3cret');
  });

  it('hides non-URL secrets whole, even ones that parse as URLs', () => {
    const c = resolveConfig({ flags: { saslPassword: 'pass:word@host', saslUsername: 'relay', saslMechanism: 'scram-sha-256' } });
    expect(redactConfig(c).saslPassword).toBe('***');
  });

  it('derives flag and env names from the key', () => {
    expect(flagName('columnAggregateType')).toBe('column-aggregate-type');
    expect(envName('columnAggregateType')).toBe('OUTBOX_TAIL_COLUMN_AGGREGATE_TYPE');
  });
});

describe('--max-in-flight-requests', () => {
  it('takes 1-5 in flight on either client, at least once, on the main thread; 1 by default', () => {
    expect(resolveConfig({ flags: {} }).maxInFlightRequests).toBe(1);
    expect(resolveConfig({ env: { OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS: '5' } }).maxInFlightRequests).toBe(5);
    expect(resolveConfig({ env: { OUTBOX_TAIL_KAFKA_CLIENT: 'platformatic', OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS: '3' } }).maxInFlightRequests).toBe(3);
    expect(() => resolveConfig({ flags: { maxInFlightRequests: 6 } })).toThrow(/maxInFlightRequests|max-in-flight-requests/);
  });

  it('refuses more than one in flight with exactly-once or on the sink thread instead of ignoring it', () => {
    expect(() => resolveConfig({ flags: { delivery: 'exactly-once', maxInFlightRequests: 2 } })).toThrow(/--delivery at-least-once/);
    expect(() => resolveConfig({ flags: { kafkaClient: 'platformatic', sinkThread: 'worker', maxInFlightRequests: 2 } })).toThrow(/--sink-thread main/);
  });
});
