/**
 * --kafka-client: both sinks deliver the same records, and put every key on
 * the same partition (the Java client's murmur2 partitioner), so switching the
 * client keeps per-key order across the switch. The full relay suites run
 * against the other client with OUTBOX_TAIL_KAFKA_CLIENT=platformatic.
 */
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../support/database.js';
import { kafkaFor } from '../support/kafka.js';
import { isStreaming } from '../support/relay-process.js';
import { relayTestbed } from '../support/relay-testbed.js';
import { createSlot, currentWalLsn, query, waitForConfirmed } from '../support/slot.js';
import { createTopicsAndWait } from '../../src/kafka/kafkajs/create-topics.js';

const bed = relayTestbed();

describe('--kafka-client', () => {
  it('kafkajs, platformatic and kafkajs on the sink thread deliver the same records, each key on the same partition', async () => {
    const partitionsBy: Record<string, Map<string, number>> = {};
    const variants = [
      ['kafkajs', 'main'],
      ['platformatic', 'main'],
      ['kafkajs', 'worker'],
    ] as const;
    for (const [client, thread] of variants) {
      const type = uniqueName(`client_${client}_${thread}`);
      const topic = `outbox.event.${type}`;
      const admin = kafkaFor(bed.stack).admin();
      await admin.connect();
      await createTopicsAndWait(admin, [{ topic, numPartitions: 6 }]);
      await admin.disconnect();
      const slot = uniqueName('slot');
      await createSlot(bed.db.url, slot);
      const collector = await bed.collect([topic]);
      const relay = bed.relay(slot, { env: { OUTBOX_TAIL_KAFKA_CLIENT: client, OUTBOX_TAIL_SINK_THREAD: thread } });
      const start = await relay.waitForLog((l) => l.event === 'start');
      expect(start.config as { kafkaClient?: string; sinkThread?: string }).toMatchObject({ kafkaClient: client, sinkThread: thread });
      await relay.waitForLog(isStreaming);
      await query(
        bed.db.url,
        `insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers)
         select $1, 'key-' || (g % 50), 'Tested', jsonb_build_object('n', g), jsonb_build_object('trace', 't' || g) from generate_series(1, 500) g`,
        [type],
      );
      const end = await currentWalLsn(bed.db.url);
      await collector.waitForDistinct(500);
      await waitForConfirmed(bed.db.url, slot, end);
      // The next round's rows are in the same outbox table: this relay must not publish them too.
      await relay.kill();
      expect(collector.records).toHaveLength(500);
      const partitions = new Map<string, number>();
      const lastN = new Map<string, number>();
      for (const r of collector.records) {
        const key = r.key!;
        if (partitions.has(key)) expect(partitions.get(key), key).toBe(r.partition);
        partitions.set(key, r.partition);
        expect(r.headers.trace).toBe(`t${JSON.parse(r.value!.toString()).n}`);
        expect(r.headers.event_type).toBe('Tested');
        // Per-key order: n increases along each key's partition.
        const n = JSON.parse(r.value!.toString()).n as number;
        expect(n).toBeGreaterThan(lastN.get(key) ?? 0);
        lastN.set(key, n);
      }
      partitionsBy[`${client}/${thread}`] = partitions;
    }
    expect(partitionsBy['platformatic/main']!.size).toBe(50);
    expect(new Set(partitionsBy['kafkajs/main']!.values()).size).toBeGreaterThan(1);
    expect(Object.fromEntries(partitionsBy['platformatic/main']!)).toEqual(Object.fromEntries(partitionsBy['kafkajs/main']!));
    expect(Object.fromEntries(partitionsBy['kafkajs/worker']!)).toEqual(Object.fromEntries(partitionsBy['kafkajs/main']!));
  });

  it('a healthy start logs no warning with either client (kafkajs: bounded idempotent retries are intended)', async () => {
    for (const client of ['kafkajs', 'platformatic'] as const) {
      const slot = uniqueName(`quiet_${client}`);
      await createSlot(bed.db.url, slot);
      // debug level, so the downgraded kafkajs line is there to be seen, just not as a warning.
      const relay = bed.relay(slot, { env: { OUTBOX_TAIL_KAFKA_CLIENT: client, OUTBOX_TAIL_LOG_LEVEL: 'debug' } });
      await relay.waitForLog(isStreaming);
      await new Promise((r) => setTimeout(r, 500));
      await relay.kill();
      // Levels are labels in our logs (createLogger's formatter).
      const warnings = relay.logs.filter((l) => ['warn', 'error', 'fatal'].includes(l.level));
      expect(warnings, `${client}: ${JSON.stringify(warnings)}`).toEqual([]);
      if (client === 'kafkajs') expect(relay.logs.some((l) => l.kafkajs === 'Producer' && /Limiting retries/.test(l.msg))).toBe(true);
    }
  });
});
