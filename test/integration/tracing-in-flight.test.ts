/**
 * With tracing on, the relay keeps --max-in-flight-requests produce requests
 * in flight: the tracing decorator passes the sink's maxInFlightRequests
 * through (before the decorator mechanism the tracing sink dropped it, and the
 * depth was silently 1). Counted from the publisher's own debug line per
 * request ("publishing batch", inFlight = requests already outstanding).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { freePort } from '../../dev/stack/process.js';
import { uniqueName } from '../support/database.js';
import type { RelayVariant } from '../support/broken-checkpointers.js';
import { isStreaming, type RelayProcess } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot } from '../support/slot.js';

const bed = relayTestbed();
const ROWS = 300;
const DEPTH = 3;

const batchLines = (relay: RelayProcess) => relay.logs.filter((l) => l.event === 'batch' && typeof l.inFlight === 'number');

/** The most produce requests outstanding at once, as the publisher logged them (one record per request). */
async function mostInFlight(relay: RelayProcess): Promise<number> {
  // The relay's stdout is read a little after Kafka has the records: wait for every request's line.
  const deadline = Date.now() + 15_000;
  while (batchLines(relay).length < ROWS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const batches = batchLines(relay);
  expect(batches.length, 'the relay logged each of its requests (debug)').toBeGreaterThanOrEqual(ROWS);
  return Math.max(...batches.map((l) => (l.inFlight as number) + 1));
}

/** Writes a backlog, then relays it with tracing on, --kafka-client platformatic and --max-in-flight-requests 3. */
async function relayBacklogWithTracing(variant?: RelayVariant): Promise<RelayProcess> {
  const type = uniqueName('inflight');
  const topic = `outbox.event.${type}`;
  const slot = uniqueName('slot');
  await createSlot(bed.db.url, slot);
  const client = new pg.Client({ connectionString: bed.db.url });
  await client.connect();
  try {
    await client.query('begin');
    for (let i = 0; i < ROWS; i++) await writeOutboxEvent(client, { aggregateType: type, aggregateId: `k-${i % 7}`, eventType: 'E', payload: { i } });
    await client.query('commit');
  } finally {
    await client.end();
  }
  const collector = await bed.collect([topic]);
  const relay = bed.relay(slot, {
    ...(variant ? { variant } : {}),
    env: {
      // Tracing on (the collector is down: spans fail to export, which never holds the relay back).
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: '500',
      OUTBOX_TAIL_KAFKA_CLIENT: 'platformatic',
      OUTBOX_TAIL_MAX_IN_FLIGHT_REQUESTS: String(DEPTH),
      OUTBOX_TAIL_BATCH_MAX_MESSAGES: '1',
      OUTBOX_TAIL_LOG_LEVEL: 'debug',
    },
  });
  await relay.waitForLog(isStreaming);
  expect(relay.logs.some((l) => l.event === 'tracing-on')).toBe(true);
  await collector.waitForDistinct(ROWS);
  return relay;
}

describe('--max-in-flight-requests with tracing on', () => {
  it(`keeps ${DEPTH} produce requests in flight, never more`, async () => {
    const relay = await relayBacklogWithTracing();
    expect(await mostInFlight(relay)).toBe(DEPTH);
  });

  it('negative control: a sink wrapper that forgets maxInFlightRequests keeps one request in flight, and the count says so', async () => {
    const relay = await relayBacklogWithTracing('wrapper-forgets-in-flight');
    expect(await mostInFlight(relay)).toBe(1);
  });
});
