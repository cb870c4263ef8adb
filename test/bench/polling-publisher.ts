/**
 * The polling publisher the transactional-outbox article starts with, as the
 * benchmark's baseline: in one transaction, select unsent rows in id order
 * (FOR UPDATE SKIP LOCKED, so several publishers could share the table), send
 * them to Kafka, mark them sent, commit; sleep a short poll interval when
 * nothing is unsent.
 *
 * It gets every advantage the relay has: the same Kafka sink (kafkajs,
 * idempotent, acks=all), the same record builder and headers, the same batch
 * limits, the payload forwarded as jsonb text without re-serialising.
 *
 *   BENCH_ARGS='{"databaseUrl":...,"brokers":[...],"table":...,"topic":...}' node --import tsx test/bench/polling-publisher.ts
 *
 * Prints {"event":"ready"} once connected, {"event":"stopped","sent":N} on SIGTERM.
 */
import pg from 'pg';
import pino from 'pino';
import type { OutboxEvent, Transaction } from '../../src/outbox/outbox-event.js';
import { benchSink, recordBuilderModule } from './dist.js';
import { cutBatches } from './batching.js';

interface Args {
  databaseUrl: string;
  brokers: string[];
  table: string;
  topic: string;
  /** Rows per poll (one database transaction). */
  pollRows: number;
  pollIntervalMs: number;
  batchMaxMessages: number;
  batchMaxBytes: number;
  /** kafkajs or platformatic: the relay's sink of that client. */
  kafkaClient: string;
}

const args = JSON.parse(process.env.BENCH_ARGS ?? '{}') as Args;
const { RecordBuilder } = await recordBuilderModule();

interface Row {
  seq: string;
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  payload: string;
  headers: string | null;
  created_at: string;
}

async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  const sink = await benchSink(args.kafkaClient, { brokers: args.brokers, clientId: 'outbox-tail-bench-polling', retries: 5, connectTimeoutMs: 10_000, allowAutoTopicCreation: false, logger: pino({ level: 'warn' }) });
  await sink.connect();
  const builder = new RecordBuilder(args.topic);
  // Rows have no commit LSN; the header keeps its usual width.
  const txn: Transaction = { seq: 1, xid: 1, commitLsn: 0x1_a2b3c4d5n, commitTime: 0n, endLsn: null };
  let stopping = false;
  let sent = 0;
  process.on('SIGTERM', () => (stopping = true));
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  const select = {
    name: 'poll',
    text: `select seq::text, id::text, aggregate_type, aggregate_id, event_type, payload::text as payload, headers::text as headers, created_at::text as created_at
             from ${args.table} where sent_at is null order by seq limit $1 for update skip locked`,
  };
  const mark = { name: 'mark', text: `update ${args.table} set sent_at = now() where seq = any($1::bigint[])` };
  while (!stopping) {
    await client.query('begin');
    const { rows } = await client.query<Row>({ ...select, values: [args.pollRows] });
    if (rows.length === 0) {
      await client.query('commit');
      await new Promise((r) => setTimeout(r, args.pollIntervalMs));
      continue;
    }
    const records = rows.map((r) => {
      const event: OutboxEvent = {
        id: r.id,
        aggregateType: r.aggregate_type,
        aggregateId: r.aggregate_id,
        eventType: r.event_type,
        payload: Buffer.from(r.payload),
        headers: r.headers ? (JSON.parse(r.headers) as Record<string, string>) : {},
        createdAt: r.created_at,
        table: args.table,
        txn,
      };
      return builder.build(event);
    });
    try {
      for (const batch of cutBatches(records, args.batchMaxMessages, args.batchMaxBytes)) await sink.send(batch);
      await client.query({ ...mark, values: [rows.map((r) => r.seq)] });
      await client.query('commit');
      sent += rows.length;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
  }
  await sink.disconnect();
  await client.end();
  process.stdout.write(`${JSON.stringify({ event: 'stopped', sent })}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`polling-publisher: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
