/**
 * The crash test's consumer, run as a child process so it can be SIGKILLed:
 * `node --import tsx test/crash/consumer-process.ts <idempotent|naive>`,
 * configured by CRASH_* env vars. Its handler ships an order: one `shipments`
 * row per OrderCreated, and marks it cancelled on OrderCancelled.
 *
 * `naive` is a negative control built in test code: the same handler with
 * kafkajs alone, no processed-messages table, so replays apply twice.
 */
import { logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/kafkajs/create-kafka.js';
import pg from 'pg';
import { createIdempotentConsumer } from '../../src/consumer/index.js';

const mode = process.argv[2];
const brokers = process.env.CRASH_BROKERS!.split(',');
const databaseUrl = process.env.CRASH_DATABASE_URL!;
const topic = process.env.CRASH_TOPIC!;
const groupId = process.env.CRASH_GROUP!;

async function ship(tx: pg.ClientBase, eventType: string, eventId: string, orderId: number): Promise<void> {
  if (eventType === 'OrderCreated') {
    await tx.query('insert into shipments(order_id, event_id) values ($1, $2)', [orderId, eventId]);
  } else if (eventType === 'OrderCancelled') {
    await tx.query('update shipments set cancelled = true where order_id = $1', [orderId]);
  }
}

async function main(): Promise<void> {
  if (mode === 'idempotent') {
    const consumer = createIdempotentConsumer<{ orderId: number }>({
      brokers,
      groupId,
      topics: [topic],
      database: databaseUrl,
      fromBeginning: true,
      // A SIGKILLed member holds its partitions until its session expires: keep that short.
      consumer: { maxWaitTimeInMs: 100, sessionTimeout: 6_000, heartbeatInterval: 500 },
      handler: (tx, event) => ship(tx, event.eventType, event.id, event.payload.orderId),
    });
    process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
    await consumer.start();
    process.stdout.write('consumer started\n');
    await consumer.run();
    return;
  }
  if (mode === 'naive') {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const kafka = createKafka({ brokers, clientId: 'crash-naive-consumer', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 6_000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    process.on('SIGTERM', () => void consumer.disconnect().then(() => process.exit(0)));
    await consumer.run({
      eachMessage: async ({ message }) => {
        const eventType = message.headers?.event_type?.toString() ?? '';
        const id = message.headers?.id?.toString() ?? '';
        const payload = JSON.parse(message.value!.toString()) as { orderId: number };
        const client = await pool.connect();
        try {
          await ship(client, eventType, id, payload.orderId);
        } finally {
          client.release();
        }
      },
    });
    process.stdout.write('consumer started\n');
    return;
  }
  throw new Error(`unknown consumer mode ${mode}`);
}

main().catch((error) => {
  process.stderr.write(`consumer-process: ${error?.stack ?? error}\n`);
  process.exit(1);
});
