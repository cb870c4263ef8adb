/**
 * Every metric name the shipped Prometheus rules (deploy/prometheus/outbox-tail.rules.yml) and the Grafana dashboard
 * (deploy/grafana/outbox-tail.json) use is one a running relay exports on /metrics: the real daemon against the
 * stack's PostgreSQL and Kafka, scraped after rows flowed and the slot was polled. A rule on a misspelled name would
 * never fire; test/unit/observability/prometheus-rules.test.ts shows the same check catching one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../dev/stack/process.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/database.js';
import { checkShippedNames, dashboardUses, exportedNames, readDashboard, readRules, ruleUses } from '../support/metric-names.js';
import { isStreaming, startRelay, type RelayProcess } from '../support/relay-process.js';
import { createSlot, query } from '../support/slot.js';
import { getStack } from '../support/stack.js';

/** One unlabelled series' value; undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the metric names of the rules and the dashboard against a running relay', () => {
  const stack = getStack();
  let db: TestDatabase;
  let relay: RelayProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase(stack);
  });

  afterAll(async () => {
    await relay?.kill('SIGKILL');
    await db?.drop();
  });

  it('every name a rule or a panel uses is exported at /metrics, and the slot WAL limits are the server settings', async () => {
    const slot = uniqueName('metric_names');
    const topicPrefix = uniqueName('names');
    await createSlot(db.url, slot);
    const port = await freePort();
    relay = startRelay({
      databaseUrl: db.url,
      brokers: stack.brokers,
      slot,
      env: { OUTBOX_TAIL_METRICS_LISTEN: `127.0.0.1:${port}`, OUTBOX_TAIL_SLOT_POLL_INTERVAL_MS: '200', OUTBOX_TAIL_TOPIC: `${topicPrefix}.{aggregate_type}` },
    });
    await relay.waitForLog(isStreaming, 60_000);
    await query(
      db.url,
      `insert into outbox (aggregate_type, aggregate_id, event_type, payload) select 'order', 'o-' || i, 'Created', jsonb_build_object('i', i) from generate_series(1, 5) i`,
    );
    // the records published and confirmed, then a slot poll after that
    const text = await eventually('5 records published, confirmed, and a slot poll after them', async () => {
      const t = await scrape(port);
      if (value(t, `outbox_tail_records_published_total{topic="${topicPrefix}.order"}`) !== 5) return undefined;
      if ((value(t, 'outbox_tail_transactions_confirmed_total') ?? 0) < 1) return undefined;
      const polled = await scrape(port);
      return value(polled, 'outbox_tail_slot_last_poll_timestamp_seconds')! > value(t, 'outbox_tail_slot_last_poll_timestamp_seconds')! ? polled : undefined;
    });

    expect(checkShippedNames(text)).toEqual([]);

    // Most names have samples in this run; the rest are families the relay declares whose labelled series appear only
    // with an event this run did not have (a session restart, an exactly-once commit).
    const { uses, recorded } = ruleUses(readRules());
    const used = new Set([...uses, ...dashboardUses(readDashboard())].map((u) => u.name).filter((n) => !recorded.has(n) && n !== 'up'));
    const sampled = new Set(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => /^[^{\s]+/.exec(l)![0]),
    );
    const declaredOnly = [...used].filter((n) => !sampled.has(n)).sort();
    expect(declaredOnly.every((n) => exportedNames(text).has(n))).toBe(true);
    expect(
      declaredOnly.filter(
        (n) =>
          !['outbox_tail_restarts_total', 'outbox_tail_kafka_commit_duration_seconds_bucket', 'outbox_tail_kafka_commit_duration_seconds_count'].includes(n),
      ),
    ).toEqual([]);
    expect(used.size - declaredOnly.length).toBeGreaterThanOrEqual(25);

    // the two gauges the WAL-limit alert divides: what PostgreSQL says for this slot
    const [setting] = await query<{ keep: string; segment: string }>(
      db.url,
      `select (select case when setting::bigint < 0 then -1 else pg_size_bytes(setting || unit) end from pg_settings where name = 'max_slot_wal_keep_size')::text as keep,
              pg_size_bytes(current_setting('wal_segment_size'))::text as segment`,
    );
    const keep = Number(setting!.keep);
    expect(value(text, 'outbox_tail_slot_max_wal_keep_size_bytes')).toBe(keep);
    const safe = value(text, 'outbox_tail_slot_safe_wal_size_bytes');
    if (keep < 0) {
      expect(safe).toBeUndefined();
    } else {
      // PostgreSQL: the slot is lost once the WAL position passes restart_lsn's segment + the keep size + 1 segment
      expect(safe).toBeGreaterThan(0);
      expect(safe).toBeLessThanOrEqual(keep + 2 * Number(setting!.segment));
    }

    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
  });
});
