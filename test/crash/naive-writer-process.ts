/**
 * The seed article's naive publisher, as a negative control: commit the order,
 * then send the event to Kafka directly (no outbox). Killed between the two,
 * the event is gone. `node --import tsx test/crash/naive-writer-process.ts <firstId> <lastId>`
 * prints `committed <id>` after each COMMIT and `sent <id>` after each ack.
 */
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { randomUUID } from 'node:crypto';

const [first, last] = process.argv.slice(2).map(Number) as [number, number];
const brokers = process.env.CRASH_BROKERS!.split(',');
const topic = process.env.CRASH_TOPIC!;

async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.CRASH_DATABASE_URL! });
  await client.connect();
  const producer = createKafka({ brokers, clientId: 'crash-naive-writer', logLevel: logLevel.NOTHING }).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let id = first; id <= last; id++) {
    const eventId = randomUUID();
    // A writer killed while its INSERT ran can still commit it (the server notices the closed connection only
    // afterwards) without printing `committed`: the harness then restarts at that id. The naive script does not
    // know it was committed and never sends it; it skips it, as the lost event it is, instead of failing on the key.
    const inserted = await client.query('insert into orders(id, customer, amount_cents) values ($1, $2, $3) on conflict (id) do nothing', [
      id,
      `customer-${id}`,
      100,
    ]);
    if (inserted.rowCount === 0) continue;
    process.stdout.write(`committed ${id}\n`);
    // The network round trip to the broker: the window in which a crash loses the event.
    await new Promise((r) => setTimeout(r, 20));
    await producer.send({
      topic,
      acks: -1,
      messages: [{ key: String(id), value: JSON.stringify({ orderId: id }), headers: { id: eventId, event_type: 'OrderCreated', aggregate_id: String(id) } }],
    });
    process.stdout.write(`sent ${id}\n`);
  }
  await producer.disconnect();
  await client.end();
}

main().catch((error) => {
  process.stderr.write(`naive-writer: ${error?.stack ?? error}\n`);
  process.exit(1);
});
