/**
 * The benchmark's plumbing, not its speed: a tiny run of `dev/bench/run-bench.ts
 * --quick --json` on the shared stack must finish and print the documented
 * JSON shape as the last line of stdout. Performance is measured by
 * `npm run bench`, never asserted here.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getStack } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const stack = getStack();

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}dev/bench/run-bench.ts`, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const number = expect.any(Number);

describe('benchmark smoke run', () => {
  it('prints one JSON object with every scenario as the last stdout line', { timeout: 300_000 }, async () => {
    const { code, stdout, stderr } = await runBench([
      '--quick',
      '--json',
      '--events',
      '2000',
      '--big-rows',
      '2000',
      '--rates',
      '200,500',
      '--steady-seconds',
      '2',
      '--warmup-seconds',
      '0.5',
      '--write-seconds',
      '0.5',
      '--write-rounds',
      '1',
      '--database-url',
      stack.databaseUrl,
      '--brokers',
      stack.brokers.join(','),
    ]);
    expect(code, stderr.slice(-3000)).toBe(0);
    const last = stdout.trim().split('\n').pop()!;
    const result = JSON.parse(last) as Record<string, unknown>;
    // CPU per event: the relay and its walsender are on this machine even with --database-url (the broker pid is unknown then).
    const cpu = { us_per_event: { relay: number, walsender: number }, cores: number };
    const catchup = { events: 2000, seconds: number, events_per_sec: number, peak_rss_mb: number, cpu };
    expect(result).toMatchObject({
      catchup,
      catchup_batched: catchup,
      limits: { decode_events_per_sec: number, kafka_events_per_sec: number, perf_test_events_per_sec: number },
      steady: [
        { rate: 200, p50_ms: number, p99_ms: number, max_ms: number, cpu, relay_sends: { requests: number, mean_records: number } },
        { rate: 500, p50_ms: number, p99_ms: number, max_ms: number, cpu, relay_sends: { requests: number, mean_records: number } },
      ],
      big_txn: { rows: 2000, seconds: number, peak_rss_mb: number },
      polling_baseline: {
        catchup_events_per_sec: number,
        steady: [
          { rate: 200, p50_ms: number, p99_ms: number },
          { rate: 500, p50_ms: number, p99_ms: number },
        ],
      },
    });
    // write_side: every way of writing, the event ways with their catch-up; the table way alone leaves rows behind.
    const ws = (result.write_side as { variants: Array<Record<string, unknown>> }).variants;
    expect(ws.map((v) => v.variant)).toEqual(['none', 'table', 'message', 'emit']);
    for (const v of ws) {
      expect(v).toMatchObject({ transactions: number, transactions_per_sec: number, wal_bytes_per_txn: number, outbox_bytes_per_txn: number });
      if (v.variant === 'none') expect(v.catchup).toBeNull();
      else expect((v.catchup as { events: number }).events).toBe(v.transactions);
      if (v.variant === 'table') expect(v.outbox_bytes_per_txn).toBeGreaterThan(0);
      else expect(v.outbox_bytes_per_txn).toBe(0);
    }
    // Every record arrived exactly once in the catch-up scenarios (no fault, so no duplicate).
    expect((result.catchup as { records_in_kafka: number }).records_in_kafka).toBe(2000);
    expect((result.catchup_batched as { records_in_kafka: number }).records_in_kafka).toBe(2000);
    for (const s of result.steady as Array<{ p50_ms: number; p99_ms: number; max_ms: number }>) {
      expect(s.p50_ms).toBeLessThanOrEqual(s.p99_ms);
      expect(s.p99_ms).toBeLessThanOrEqual(s.max_ms);
    }
  });

  it('with --delivery exactly-once puts the results under exactly_once, with the Kafka transactions they took', { timeout: 300_000 }, async () => {
    const { code, stdout, stderr } = await runBench([
      '--quick',
      '--json',
      '--delivery',
      'exactly-once',
      '--scenarios',
      'catchup,steady',
      '--events',
      '2000',
      '--rates',
      '300',
      '--steady-seconds',
      '2',
      '--warmup-seconds',
      '0.5',
      '--database-url',
      stack.databaseUrl,
      '--brokers',
      stack.brokers.join(','),
    ]);
    expect(code, stderr.slice(-3000)).toBe(0);
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    const transactions = { commits: number, pg_transactions_per_commit: number, records_per_commit: number, commit_mean_ms: number };
    expect(result).toMatchObject({
      exactly_once: {
        catchup: { events: 2000, delivery: 'exactly-once', records_in_kafka: 2000, relay_sends: { kafka_transactions: transactions } },
        steady: [{ rate: 300, delivery: 'exactly-once', p99_ms: number, p99_ms_appended: number, relay_sends: { kafka_transactions: transactions } }],
      },
    });
    expect(result).not.toHaveProperty('catchup');
    // Visible to read_committed (the commit marker) never before the record's own append.
    const [s] = (result.exactly_once as { steady: Array<{ p50_ms: number; p50_ms_appended: number }> }).steady;
    expect(s!.p50_ms).toBeGreaterThanOrEqual(s!.p50_ms_appended);
  });
});
