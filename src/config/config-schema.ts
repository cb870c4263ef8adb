import { z } from 'zod';

/**
 * The one config schema: every option, its type, its default. Flags, env vars
 * and config files all feed this same flat shape (see options.ts for names).
 */
const int = (min: number) => z.coerce.number().int().min(min);
const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  return v;
}, z.boolean());
const list = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',') : v),
  z.array(z.string().trim().min(1)).min(1),
);
const identifier = z.string().trim().min(1);
const policy = z.enum(['fail', 'dead-letter']);

export const configSchema = z
  .object({
    slot: z
      .string()
      .regex(/^[a-z0-9_]{1,63}$/, 'slot names are 1-63 characters of a-z, 0-9 and _ (PostgreSQL rule)')
      .optional(),
    publication: identifier.default('outbox_tail'),
    table: z
      .string()
      .trim()
      .regex(/^[^.\s]+(\.[^.\s]+)?$/, 'expected "schema.table" or "table"')
      .transform((t) => (t.includes('.') ? t : `public.${t}`))
      .default('public.outbox'),
    databaseUrl: z.string().trim().min(1).optional(),
    brokers: list.default(['localhost:9092']),
    clientId: identifier.default('outbox-tail'),
    topic: z
      .string()
      .trim()
      .min(1)
      .refine((t) => !/\{(?!aggregate_type\}|event_type\}|table\})[^}]*\}/.test(t), 'unknown placeholder; use {aggregate_type}, {event_type} or {table}')
      .default('outbox.event.{aggregate_type}'),
    columnId: identifier.default('id'),
    columnAggregateType: identifier.default('aggregate_type'),
    columnAggregateId: identifier.default('aggregate_id'),
    columnEventType: identifier.default('event_type'),
    columnPayload: identifier.default('payload'),
    columnHeaders: identifier.default('headers'),
    columnCreatedAt: identifier.default('created_at'),
    createSlot: bool.default(false),
    allowAutoTopicCreation: bool.default(true),
    // Per-partition batches must stay under the broker's max.message.bytes (1 MiB by default).
    batchMaxMessages: int(1).default(5000),
    batchMaxBytes: int(1024).default(900_000),
    batchMaxWaitMs: int(0).default(0),
    maxInFlightMessages: int(1).default(20_000),
    maxInFlightBytes: int(1024).default(64 * 1024 * 1024),
    onOversize: policy.default('fail'),
    onMalformed: policy.default('fail'),
    deadLetterTopic: z.string().trim().regex(/^[A-Za-z0-9._-]{1,249}$/, 'Kafka topic names use A-Z a-z 0-9 . _ - (at most 249)').optional(),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    statusIntervalMs: int(100).default(1000),
    restartBackoffInitialMs: int(1).default(500),
    restartBackoffMaxMs: int(1).default(30_000),
    standbyRetryMs: int(100).default(2000),
    shutdownTimeoutMs: int(100).default(30_000),
    connectTimeoutMs: int(100).default(10_000),
    kafkaRetries: int(0).default(5),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const key of ['onOversize', 'onMalformed'] as const) {
      if (c[key] === 'dead-letter' && !c.deadLetterTopic) {
        ctx.addIssue({ code: 'custom', path: ['deadLetterTopic'], message: `required when ${key} is dead-letter` });
      }
    }
    if (c.restartBackoffMaxMs < c.restartBackoffInitialMs) {
      ctx.addIssue({ code: 'custom', path: ['restartBackoffMaxMs'], message: 'must be >= restartBackoffInitialMs' });
    }
  });

export type RelayConfig = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
