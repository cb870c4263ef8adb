/**
 * A PostgreSQL password that changes, for the connections outside the relay's stream (issue 41): the idempotent
 * consumer's pool and the admin commands. A role of this file's own logs in with scram (a pg_hba.conf line for it
 * alone, prepended and removed again; the shared server's other roles keep their rule); its password is changed with
 * ALTER ROLE and its file rewritten, its connections terminated. The relay's own rotation is the fault scenario
 * pg-password-rotation (test/faults/scenarios.ts) with its read-once control.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdempotentConsumer } from '../../src/consumer/index.js';
import { consumerTestbed } from '../support/consumer-testbed.js';
import { uniqueName } from '../support/database.js';
import { runCli } from '../support/run-cli.js';
import { query } from '../support/slot.js';
import { tempDir } from '../support/temp-dir.js';
import { prependHbaLines } from '../support/pg-hba.js';

const bed = consumerTestbed({ clientId: 'credential-rotation-test' });
const { stack, consumers, produce, effectsById, waitFor, recordEffect } = bed;
const dir = tempDir('outbox-tail-rotation-');
const role = uniqueName('rotating');
const passwordFile = join(dir, 'password');
let roleUrl = '';
let restoreHba: () => Promise<void> = async () => undefined;

/** The new password set and written to the file; returns how many of the role's connections were terminated. */
async function rotate(password: string): Promise<number> {
  await query(stack.databaseUrl, `alter role ${role} password '${password}'`);
  writeFileSync(passwordFile, `${password}\n`);
  // In the select list, never in WHERE: the planner may evaluate a WHERE call before the usename filter.
  const rows = await query<{ terminated: boolean }>(
    stack.databaseUrl,
    'select pg_terminate_backend(pid) as terminated from pg_stat_activity where usename = $1',
    [role],
  );
  return rows.filter((r) => r.terminated).length;
}

/** What a login with this password gets: 'ok', or the server's SQLSTATE. */
async function login(password: string): Promise<string> {
  const url = new URL(roleUrl);
  url.password = password;
  const client = new pg.Client({ connectionString: url.toString() });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

beforeAll(async () => {
  await query(stack.databaseUrl, `create role ${role} login password 'first-Pa55'`);
  await bed.pool.query(`grant all on all tables in schema public to ${role}; grant all on all sequences in schema public to ${role}`);
  restoreHba = await prependHbaLines(
    (sql, params) => bed.pool.query(sql, params).then((r) => r.rows as Array<Record<string, unknown>>),
    [`host all ${role} 0.0.0.0/0 scram-sha-256`, `host all ${role} ::/0 scram-sha-256`],
  );
  const url = new URL(bed.db.url);
  url.username = role;
  url.password = '';
  roleUrl = url.toString();
  writeFileSync(passwordFile, 'first-Pa55\n');
});

afterAll(async () => {
  await restoreHba();
  await query(stack.databaseUrl, 'select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]).catch(() => undefined);
});

describe('a PostgreSQL password that changes, outside the relay', () => {
  it('the idempotent consumer logs in again with the password its file holds after a rotation', async () => {
    const topic = await bed.newTopic('outbox.event.rotation');
    const groupId = uniqueName('g_rotation');
    const consumer = createIdempotentConsumer({
      brokers: stack.brokers,
      groupId,
      topics: [topic],
      database: { url: roleUrl, passwordFile },
      handler: recordEffect(groupId),
      backoff: { initialMs: 100, maxMs: 1_000 },
    });
    consumers.push(consumer);
    void consumer.run().catch(() => undefined);
    const before = randomUUID();
    await produce(topic, [{ id: before }]);
    await waitFor('the first event applied as the rotating role', async () => (await effectsById(groupId))[before] === 1, 30_000);

    expect(await rotate('second-Pa55'), "the consumer's connections, terminated").toBeGreaterThan(0);
    expect(await login('first-Pa55'), 'the old password no longer logs in').toBe('28P01');
    const after = randomUUID();
    await produce(topic, [{ id: after }]);
    await waitFor('the event after the rotation applied', async () => (await effectsById(groupId))[after] === 1, 30_000);
    expect(await effectsById(groupId)).toEqual({ [before]: 1, [after]: 1 });
  }, 90_000);

  it('a consumer given the password once, in its URL, cannot log in after the rotation (what the file prevents)', async () => {
    await rotate('third-Pa55');
    const topic = await bed.newTopic('outbox.event.rotation_once');
    const groupId = uniqueName('g_rotation_once');
    const inUrl = new URL(roleUrl);
    inUrl.password = 'third-Pa55';
    const consumer = createIdempotentConsumer({
      brokers: stack.brokers,
      groupId,
      topics: [topic],
      database: { url: inUrl.toString() },
      handler: recordEffect(groupId),
      backoff: { initialMs: 100, maxMs: 1_000 },
    });
    consumers.push(consumer);
    void consumer.run().catch(() => undefined);
    const first = randomUUID();
    await produce(topic, [{ id: first }]);
    await waitFor('the first event applied', async () => (await effectsById(groupId))[first] === 1, 30_000);
    await rotate('fourth-Pa55');
    const second = randomUUID();
    await produce(topic, [{ id: second }]);
    // It can never log in again: 8 s is only how long this control looks.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    expect(await effectsById(groupId), 'not applied: the password read once is stale').toEqual({ [first]: 1 });
  }, 90_000);

  it('admin commands read --pg-password-file when they connect: status works after a rotation, the old password fails', async () => {
    await rotate('fifth-Pa55');
    const env = { OUTBOX_TAIL_DATABASE_URL: roleUrl, OUTBOX_TAIL_BROKERS: stack.brokers.join(','), OUTBOX_TAIL_CONNECT_TIMEOUT_MS: '5000' };
    const status = await runCli(['status', '--slot', uniqueName('no_such_slot'), '--json', '--pg-password-file', passwordFile], env);
    expect(status.stderr).not.toMatch(/password authentication failed|PG_AUTH_FAILED/);
    // It connected and read the catalog: the slot it was asked about does not exist.
    expect(JSON.parse(status.stdout), status.stderr).toMatchObject({ exists: false });
    const stale = join(dir, 'stale-password');
    writeFileSync(stale, 'fourth-Pa55\n');
    const refused = await runCli(['status', '--slot', uniqueName('no_such_slot'), '--json', '--pg-password-file', stale], env);
    expect(refused.stderr).toMatch(/PG_AUTH_FAILED/);
    expect(refused.stderr).not.toContain('fourth-Pa55');
  }, 60_000);
});
