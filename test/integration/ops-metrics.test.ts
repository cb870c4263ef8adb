/**
 * Metrics and health endpoints during a real run: the compiled daemon started
 * with the container image's own command (ENTRYPOINT + CMD of docker/Dockerfile,
 * minus tini, /app mapped to this checkout), scraped while rows flow; a second
 * relay on the same slot is a healthy standby (alive, not ready) and takes over
 * after the first one stops. The image's HEALTHCHECK command is run directly.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev/stack/process.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { readTopic } from '../support/kafka.js';
import { isStreaming, startRelay, type LogLine, type RelayProcess } from '../support/relay-process.js';
import { createSlot, query } from '../support/slot.js';
import { getStack } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dockerfile = readFileSync(`${ROOT}docker/Dockerfile`, 'utf8');
const jsonInstruction = (name: string) => JSON.parse(new RegExp(`^${name} (\\[.*\\])$`, 'm').exec(dockerfile)![1]!) as string[];
/** The image's command as run here: tini dropped, /app/ -> the checkout. */
const imageCommand = [...jsonInstruction('ENTRYPOINT'), ...jsonInstruction('CMD')]
  .filter((a, i, all) => !(i <= all.indexOf('--') && all.includes('--')))
  .map((a) => a.replace(/^\/app\//, ROOT));
const healthcheckCommand = jsonInstruction('HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD').map((a) =>
  a.replace(/^\/app\//, ROOT),
);

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** One series' value; undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const status = async (port: number, path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

function runHealthcheck(port: number): number | null {
  const [cmd, ...args] = healthcheckCommand;
  const r = spawnSync(cmd === 'node' ? process.execPath : cmd!, args, {
    env: { PATH: process.env.PATH, OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}` },
    encoding: 'utf8',
    timeout: 15_000,
  });
  return r.status;
}

describe('metrics and health during a real run', () => {
  const stack = getStack();
  let db: TestDatabase;
  let slot: string;
  let topicPrefix: string;
  const relays: RelayProcess[] = [];

  const insert = async (rows: Array<{ type: string; aggregateId: string; payload: unknown }>) =>
    query(
      db.url,
      `insert into outbox (aggregate_type, aggregate_id, event_type, payload)
       select x->>'type', x->>'aggregateId', 'Created', x->'payload' from jsonb_array_elements($1::jsonb) x returning id::text`,
      [JSON.stringify(rows)],
    );

  const start = (port: number, name: string) => {
    expect(imageCommand.slice(0, 1)).toEqual(['node']);
    const relay = startRelay({
      databaseUrl: db.url,
      brokers: stack.brokers,
      slot,
      args: imageCommand.slice(2),
      env: {
        OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}`,
        OUTBOX_TAIL_SLOT_POLL_INTERVAL_MS: '200',
        OUTBOX_TAIL_TOPIC: `${topicPrefix}.{aggregate_type}`,
        OUTBOX_TAIL_CLIENT_ID: name,
      },
    });
    relays.push(relay);
    return relay;
  };

  beforeAll(async () => {
    db = await createTestDatabase(stack);
    slot = uniqueName('ops_metrics');
    topicPrefix = uniqueName('ops');
    await createSlot(db.url, slot);
    expect(imageCommand[1]).toBe(`${ROOT}bin/outbox-tail.js`);
  });

  afterAll(async () => {
    for (const r of relays) await r.kill('SIGKILL');
    await db?.drop();
  });

  it('exposes moving metrics, health and readiness; a second relay is a healthy standby that takes over', async () => {
    const portA = await freePort();
    const a = start(portA, 'ops-relay-a');
    await a.waitForLog(isStreaming, 60_000);
    await a.waitForLog((l) => l.event === 'metrics-listening');

    // the start line: effective config, stable shape
    const startLine = await a.waitForLog((l) => l.event === 'start');
    expect(startLine).toMatchObject({ level: 'info', msg: 'outbox-tail starting' });
    expect((startLine.config as Record<string, unknown>).metricsListen).toBe(`127.0.0.1:${portA}`);

    const before = await scrape(portA);
    expect(value(before, 'outbox_tail_replication_state{state="streaming"}')).toBe(1);
    expect(value(before, `outbox_tail_records_published_total{topic="${topicPrefix}.order"}`)).toBeUndefined();
    expect(await status(portA, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok', state: 'streaming' } });
    expect(await status(portA, '/readyz')).toMatchObject({ status: 200 });
    const lsnBefore = value(before, 'outbox_tail_confirmed_lsn') ?? 0;

    const rows = [
      ...Array.from({ length: 12 }, (_, i) => ({ type: 'order', aggregateId: `order-secret-key-${i}`, payload: { marker: 'payload-marker-xyz', i } })),
      ...Array.from({ length: 5 }, (_, i) => ({ type: 'customer', aggregateId: `customer-secret-key-${i}`, payload: { marker: 'payload-marker-xyz', i } })),
    ];
    const ids = [...(await insert(rows.slice(0, 6))), ...(await insert(rows.slice(6, 12))), ...(await insert(rows.slice(12)))].map((r) => r.id as string);

    const after = await eventually('records counted by topic', async () => {
      const text = await scrape(portA);
      return value(text, `outbox_tail_records_published_total{topic="${topicPrefix}.order"}`) === 12 &&
        value(text, `outbox_tail_records_published_total{topic="${topicPrefix}.customer"}`) === 5 &&
        (value(text, 'outbox_tail_transactions_confirmed_total') ?? 0) >= 3 &&
        (value(text, 'outbox_tail_confirmed_lsn') ?? 0) > lsnBefore
        ? text
        : undefined;
    });
    // Exactly the 17 rows of the 3 transactions (PostgreSQL 15 sends no empty transactions); no replays without a fault.
    expect(value(after, 'outbox_tail_transactions_confirmed_total')).toBe(3);
    expect(value(after, 'outbox_tail_events_received_total')).toBe(17);
    expect(value(after, 'outbox_tail_publish_latency_seconds_count')).toBe(17);
    expect(value(after, 'outbox_tail_batch_records_sum')).toBe(17);
    // one to three produce requests: the inserts commit one after the other, a batch may take one or more of them
    expect(value(after, 'outbox_tail_batches_total')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'outbox_tail_batches_total')).toBeLessThanOrEqual(3);
    expect(value(after, 'outbox_tail_dead_lettered_total')).toBe(0);
    expect(value(after, 'outbox_tail_last_confirm_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 120);
    // slot poller (normal connection)
    const polled = await eventually('a slot poll after the confirm', async () => {
      const text = await scrape(portA);
      return value(text, 'outbox_tail_slot_wal_status{wal_status="reserved"}') === 1 && value(text, 'outbox_tail_slot_active') === 1 ? text : undefined;
    });
    // restart_lsn <= confirmed_flush_lsn <= pg_current_wal_lsn(): the slot keeps WAL from before its confirm,
    // and its restart point is a record the server wrote, so some WAL is always retained
    const lag = value(polled, 'outbox_tail_slot_lag_bytes')!;
    const retainedWal = value(polled, 'outbox_tail_slot_retained_wal_bytes')!;
    expect(retainedWal).toBeGreaterThan(0);
    expect(lag).toBeLessThanOrEqual(retainedWal);
    expect(value(polled, 'outbox_tail_stalled')).toBe(0);
    expect(value(polled, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // no ids, keys or payloads anywhere in the metrics
    for (const secret of [...ids, 'secret-key', 'payload-marker-xyz']) expect(polled).not.toContain(secret);
    // and the records are really in Kafka
    expect(await readTopic(stack, `${topicPrefix}.customer`, 5)).toHaveLength(5);

    // the image's HEALTHCHECK command, run directly
    expect(runHealthcheck(portA)).toBe(0);
    expect(runHealthcheck(await freePort())).toBe(1);

    // a second relay on the same slot: a standby, alive but not ready
    const portB = await freePort();
    const b = start(portB, 'ops-relay-b');
    await b.waitForLog((l) => l.event === 'standby', 60_000);
    await eventually('B reports standby', async () => (await status(portB, '/readyz')).body.state === 'standby');
    expect(await status(portB, '/readyz')).toMatchObject({ status: 503, body: { status: 'not ready', state: 'standby' } });
    expect(await status(portB, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok', state: 'standby' } });
    expect(runHealthcheck(portB)).toBe(0);
    const standby = await eventually('standby retries counted', async () => {
      const text = await scrape(portB);
      return (value(text, 'outbox_tail_restarts_total{cause="SLOT_ACTIVE"}') ?? 0) >= 1 ? text : undefined;
    });
    expect(value(standby, 'outbox_tail_replication_state{state="standby"}')).toBe(1);
    expect(value(standby, 'outbox_tail_replication_state{state="streaming"}')).toBe(0);

    // A stops cleanly on SIGTERM; B takes over and becomes ready
    a.child.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    await b.waitForLog((l) => l.event === 'takeover', 60_000);
    await eventually('B ready', async () => (await status(portB, '/readyz')).status === 200);
    await insert([{ type: 'order', aggregateId: 'after-takeover', payload: { n: 1 } }]);
    await eventually('B publishes', async () => value(await scrape(portB), `outbox_tail_records_published_total{topic="${topicPrefix}.order"}`)! >= 1);

    // log shape: JSON, level + time on every line; component and slot on the relay's lines
    for (const line of a.logs) {
      expect(line.level, JSON.stringify(line)).toMatch(/^(trace|debug|info|warn|error|fatal)$/);
      expect(typeof line.time).toBe('string');
    }
    const streaming = a.logs.find(isStreaming) as LogLine;
    expect(streaming).toMatchObject({ component: 'relay', slot });
    expect(a.logs.find((l) => l.event === 'drained')).toMatchObject({ component: 'relay', slot, lsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/) });
  });
});
