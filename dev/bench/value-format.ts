/**
 * --value-format: the relay's CPU cost per event of encoding the bench's
 * payload (PAYLOAD_SQL's shape, ~300 bytes of JSON) with Avro or JSON Schema,
 * next to the default json value (nothing to do). Measured on the encoder
 * with its schema cached, as the relay runs between refreshes: the registry
 * is asked once per subject per --schema-registry-refresh-ms, not per event.
 *
 *   npx tsx dev/bench/value-format.ts [--events N]
 *
 * run-bench.ts runs it as the value_format scenario.
 */
import { parseArgs } from 'node:util';
import type { OutboxEvent } from '../../src/pipeline/outbox-event.js';
import { Lsn } from '../../src/shared/lsn.js';
import { RecordBuilder } from '../../src/pipeline/publish/record-format/record-builder.js';
import { ValueEncoder } from '../../src/pipeline/publish/record-format/value-encoder.js';
import type { RegisteredSchema } from '../../src/schema-registry/registry-client.js';

const AVRO = JSON.stringify({
  type: 'record',
  name: 'OrderCreated',
  fields: [
    { name: 'orderId', type: 'long' },
    { name: 'customer', type: 'string' },
    { name: 'amountCents', type: 'int' },
    {
      name: 'lines',
      type: {
        type: 'array',
        items: {
          type: 'record',
          name: 'Line',
          fields: [
            { name: 'sku', type: 'string' },
            { name: 'qty', type: 'int' },
          ],
        },
      },
    },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
});
const JSON_SCHEMA = JSON.stringify({
  type: 'object',
  required: ['orderId', 'customer', 'amountCents', 'lines'],
  properties: {
    orderId: { type: 'integer' },
    customer: { type: 'string' },
    amountCents: { type: 'integer' },
    lines: { type: 'array', items: { type: 'object', required: ['sku', 'qty'], properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
    note: { type: 'string' },
  },
});

export interface ValueFormatResult {
  events: number;
  /** Microseconds of CPU per event spent encoding the value, by --value-format (json: 0, nothing is done). */
  us_per_event: { avro: number; 'json-schema': number };
  /** Value bytes per event, by format. */
  value_bytes: { json: number; avro: number; 'json-schema': number };
}

function events(n: number): OutboxEvent[] {
  const txn = { seq: 1, xid: 1, commitLsn: Lsn.of(100n), commitTime: 0n, endLsn: null };
  return Array.from({ length: n }, (_, g) => ({
    id: `00000000-0000-0000-0000-${String(g).padStart(12, '0')}`,
    aggregateType: 'order',
    aggregateId: String(g % 10000),
    eventType: 'OrderCreated',
    payload: Buffer.from(
      JSON.stringify({
        orderId: g,
        customer: `customer-${g % 97}`,
        amountCents: 100 + ((g * 7919) % 90000),
        lines: [{ sku: `sku-${g % 13}`, qty: 1 + (g % 3) }],
        note: 'x'.repeat(182),
      }),
    ),
    headers: {},
    createdAt: null,
    table: 'public.outbox',
    txn,
  }));
}

async function measure(format: 'avro' | 'json-schema', input: OutboxEvent[]): Promise<{ us: number; bytes: number }> {
  const schema: RegisteredSchema = format === 'avro' ? { id: 1, type: 'AVRO', schema: AVRO } : { id: 2, type: 'JSON', schema: JSON_SCHEMA };
  const encoder = new ValueEncoder(
    { valueFormat: format, subjectTemplate: '{topic}-value', refreshMs: 3_600_000, registry: { url: 'http://127.0.0.1:1' } },
    { latest: async () => schema },
  );
  const builder = new RecordBuilder('outbox.event.{aggregate_type}');
  const records = input.map((e) => builder.build(e));
  await encoder.encode(records[0]!, input[0]!); // caches the schema, as the first event of a subject does
  let bytes = 0;
  const run = () => {
    for (let i = 0; i < records.length; i++) {
      const r = encoder.tryEncode(records[i]!, input[i]!);
      if (!r?.ok) throw new Error('bench payload does not fit its schema');
      bytes += r.value.length;
    }
  };
  run(); // warm-up (JIT)
  bytes = 0;
  const t0 = process.cpuUsage();
  run();
  const cpu = process.cpuUsage(t0);
  return { us: Math.round(((cpu.user + cpu.system) / input.length) * 100) / 100, bytes: Math.round(bytes / input.length) };
}

export async function benchValueFormat(n = 50_000): Promise<ValueFormatResult> {
  const input = events(n);
  const avro = await measure('avro', input);
  const jsonSchema = await measure('json-schema', input);
  return {
    events: n,
    us_per_event: { avro: avro.us, 'json-schema': jsonSchema.us },
    value_bytes: { json: Math.round(input.reduce((s, e) => s + e.payload.length, 0) / n), avro: avro.bytes, 'json-schema': jsonSchema.bytes },
  };
}

export function valueFormatLine(r: ValueFormatResult): string {
  return `value_format: avro ${r.us_per_event.avro} us/event (${r.value_bytes.avro} B), json-schema ${r.us_per_event['json-schema']} us/event (${r.value_bytes['json-schema']} B), json 0 us (${r.value_bytes.json} B); ${r.events} events, schema cached`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { events: { type: 'string' } } });
  const r = await benchValueFormat(values.events ? Number(values.events) : undefined);
  process.stdout.write(`${valueFormatLine(r)}\n`);
}
