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
 *   BENCH_ARGS='{"databaseUrl":...,"brokers":[...],"table":...,"topic":...}' node --import tsx dev/bench/polling-publisher.ts
 *
 * Prints {"event":"ready"} once connected, {"event":"stopped","sent":N} on SIGTERM.
 */
import pg from 'pg';
import { benchSink, recordBuilderModule } from './dist.js';
import { cutBatches } from './batching.js';
import { OUTBOX_ROW_COLUMNS, rowEvent, type OutboxRowText } from './outbox-row-event.js';

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

interface Row extends OutboxRowText {
  seq: string;
}

async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  const sink = await benchSink(args.kafkaClient, args.brokers, 'outbox-tail-bench-polling');
  await sink.connect();
  const builder = new RecordBuilder(args.topic);
  let stopping = false;
  let sent = 0;
  process.on('SIGTERM', () => (stopping = true));
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  const select = {
    name: 'poll',
    text: `select seq::text, ${OUTBOX_ROW_COLUMNS} from ${args.table} where sent_at is null order by seq limit $1 for update skip locked`,
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
    const records = rows.map((r) => builder.build(rowEvent(r, args.table)));
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
