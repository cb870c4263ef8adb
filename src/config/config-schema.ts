import { z } from 'zod';
import { DEFAULT_MESSAGE_PREFIX } from '../outbox/message-content.js';
import { DEFAULT_OUTBOX_COLUMNS as COLUMNS, DEFAULT_OUTBOX_TABLE } from '../outbox/outbox-columns.js';
import { readSecretFile } from '../secrets/read-secret-file.js';
import { RECORD_HEADER_NAMES } from '../record-format/record-headers.js';

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
const list = z.preprocess((v) => (typeof v === 'string' ? v.split(',') : v), z.array(z.string().trim().min(1)).min(1));
const identifier = z.string().trim().min(1);
const policy = z.enum(['fail', 'dead-letter']);
const path = z.string().trim().min(1);
/** host:port (IPv6 in brackets) or "off". */
const listenAddress = z
  .string()
  .trim()
  .regex(/^(off|(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5})$/, 'expected host:port (e.g. 127.0.0.1:9464, [::1]:9464) or off');

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
      .default(DEFAULT_OUTBOX_TABLE),
    // Table rows, logical decoding messages (pg_logical_emit_message, README.md "Writing events"), or both.
    source: z.enum(['table', 'messages', 'both']).default('table'),
    // The prefix outbox_tail.emit() writes with (outbox_tail.message_prefix); other prefixes are ignored.
    messagePrefix: z.string().min(1).max(255).default(DEFAULT_MESSAGE_PREFIX),
    // 0 = off. A non-transactional message (prefix <message-prefix>-heartbeat) when nothing streamed for this long,
    // so a quiet database still gives the walsender a position to report and the slot can be confirmed past it.
    heartbeatIntervalMs: int(0).default(0),
    databaseUrl: z.string().trim().min(1).optional(),
    brokers: list.default(['localhost:9092']),
    clientId: identifier.default('outbox-tail'),
    topic: z
      .string()
      .trim()
      .min(1)
      .refine((t) => !/\{(?!aggregate_type\}|event_type\}|table\})[^}]*\}/.test(t), 'unknown placeholder; use {aggregate_type}, {event_type} or {table}')
      .default('outbox.event.{aggregate_type}'),
    // The standard headers on every record (README, Record format). id is what consumers deduplicate on, so it is always sent;
    // verify needs created_at. Fewer headers cost the relay and the broker less per record (README, Performance).
    recordHeaders: z
      .preprocess((v) => (typeof v === 'string' ? v.split(',') : v), z.array(z.string().trim().pipe(z.enum(RECORD_HEADER_NAMES))).min(1))
      .refine((h) => h.includes('id'), 'must include id: the idempotent consumer and verify find each event by it')
      .transform((h) => [...new Set(h)])
      .default([...RECORD_HEADER_NAMES]),
    columnId: identifier.default(COLUMNS.id),
    columnAggregateType: identifier.default(COLUMNS.aggregateType),
    columnAggregateId: identifier.default(COLUMNS.aggregateId),
    columnEventType: identifier.default(COLUMNS.eventType),
    columnPayload: identifier.default(COLUMNS.payload),
    columnHeaders: identifier.default(COLUMNS.headers),
    columnCreatedAt: identifier.default(COLUMNS.createdAt),
    createSlot: bool.default(false),
    // PostgreSQL 17+: the slot is created with failover = true, so a standby with
    // sync_replication_slots = on keeps a copy (README, Failover slots).
    failoverSlot: bool.default(false),
    allowAutoTopicCreation: bool.default(true),
    // Per-partition batches must stay under the broker's max.message.bytes (1 MiB by default).
    batchMaxMessages: int(1).default(5000),
    // ~500 records of ~600 bytes: kafkajs groups a batch per partition by
    // copying the array per message (quadratic), and its encoding garbage is
    // freed only at the next GC; smaller batches cut both at the same catch-up
    // throughput (README.md, Performance).
    batchMaxBytes: int(1024).default(300_000),
    batchMaxWaitMs: int(0).default(0),
    // A few batches ahead of the one being sent is enough to keep Kafka busy
    // (2,500 = five 300 kB batches of ~600-byte records); every in-flight
    // record costs ~2 kB of heap, and records queued longer than two
    // scavenges are promoted: 2,500 kept catch-up throughput and cut ~7 MB
    // off its peak RSS against 5,000 (README.md, Performance).
    maxInFlightMessages: int(1).default(2_500),
    maxInFlightBytes: int(1024).default(16 * 1024 * 1024),
    onOversize: policy.default('fail'),
    onMalformed: policy.default('fail'),
    onSlotLost: z.enum(['halt', 'recover']).default('halt'),
    recoverMarginMs: int(0).default(3_600_000),
    deadLetterTopic: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]{1,249}$/, 'Kafka topic names use A-Z a-z 0-9 . _ - (at most 249)')
      .optional(),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    statusIntervalMs: int(100).default(1000),
    restartBackoffInitialMs: int(1).default(500),
    restartBackoffMaxMs: int(1).default(30_000),
    standbyRetryMs: int(100).default(2000),
    shutdownTimeoutMs: int(100).default(30_000),
    connectTimeoutMs: int(100).default(10_000),
    // Like PostgreSQL's wal_receiver_timeout: a replication connection silent this long is dead (0 = never).
    replicationTimeoutMs: int(0).default(60_000),
    kafkaRetries: int(0).default(5),
    // kafkajs's requestTimeout: a produce request unanswered this long fails and is retried (a black-holed broker connection is found this way).
    kafkaRequestTimeoutMs: int(100).default(30_000),
    kafkaClient: z.enum(['kafkajs', 'platformatic']).default('kafkajs'),
    // worker: the Kafka client and record encoding run on a worker thread, so the relay uses a second core (README, Performance).
    sinkThread: z.enum(['main', 'worker']).default('main'),
    // Exactly-once: Kafka transactions carrying whole PostgreSQL transactions plus the slot's watermark (README.md, Exactly-once delivery).
    delivery: z.enum(['at-least-once', 'exactly-once']).default('at-least-once'),
    // Default outbox-tail-<slot> (set below): one transactional id per slot, so a second relay of the slot fences the first.
    transactionalId: z.string().trim().min(1).max(255).optional(),
    offsetsTopic: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]{1,249}$/, 'Kafka topic names use A-Z a-z 0-9 . _ - (at most 249)')
      .default('outbox-tail.offsets'),
    // Kafka's producer default; must not exceed the broker's transaction.max.timeout.ms (15 min by default).
    transactionTimeoutMs: int(1000).default(60_000),
    // Transactional producers taking turns (ids <transactional-id>, <transactional-id>.2, ...): a Kafka transaction
    // begins without waiting for the coordinator to finish writing the previous one's markers (README, Exactly-once).
    transactionLanes: int(1).max(4).default(2),
    // Operations: secrets from files, TLS, SASL, metrics and health.
    databaseUrlFile: path.optional(),
    pgSslmode: z.enum(['disable', 'require', 'verify-ca', 'verify-full']).optional(),
    pgSslrootcert: path.optional(),
    pgSslcert: path.optional(),
    pgSslkey: path.optional(),
    kafkaSsl: bool.default(false),
    kafkaSslCa: path.optional(),
    kafkaSslCert: path.optional(),
    kafkaSslKey: path.optional(),
    saslMechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
    saslUsername: z.string().trim().min(1).optional(),
    saslPassword: z.string().min(1).optional(),
    saslPasswordFile: path.optional(),
    metricsListen: listenAddress.default('127.0.0.1:9464'),
    stallTimeoutMs: int(1000).default(120_000),
    slotPollIntervalMs: int(100).default(10_000),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const key of ['onOversize', 'onMalformed'] as const) {
      if (c[key] === 'dead-letter' && !c.deadLetterTopic) {
        ctx.addIssue({ code: 'custom', path: ['deadLetterTopic'], message: `required when ${key} is dead-letter` });
      }
    }
    if (c.delivery === 'exactly-once' && c.kafkaClient !== 'kafkajs') {
      // @platformatic/kafka has transactions too, but its sink has no transactional path and the crash suite has not proven one.
      ctx.addIssue({ code: 'custom', path: ['kafkaClient'], message: 'exactly-once delivery runs on the kafkajs client only (--kafka-client kafkajs)' });
    }
    if (c.delivery === 'exactly-once' && c.onSlotLost === 'recover') {
      // The backfill is at least once, and the old watermark would stand behind the new slot (WATERMARK_BEHIND_SLOT).
      ctx.addIssue({
        code: 'custom',
        path: ['onSlotLost'],
        message: 'recover is not automatic with exactly-once delivery: run `outbox-tail recover`, then delete the watermark (README, Recovering a lost slot)',
      });
    }
    if (c.restartBackoffMaxMs < c.restartBackoffInitialMs) {
      ctx.addIssue({ code: 'custom', path: ['restartBackoffMaxMs'], message: 'must be >= restartBackoffInitialMs' });
    }
    const exclusive = [
      ['databaseUrl', 'databaseUrlFile'],
      ['saslPassword', 'saslPasswordFile'],
    ] as const;
    for (const [value, file] of exclusive) {
      if (c[value] !== undefined && c[file] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [file], message: `give either ${value} or ${file}, not both` });
      }
    }
    if (c.saslMechanism && !c.saslUsername) ctx.addIssue({ code: 'custom', path: ['saslUsername'], message: 'required with saslMechanism' });
    if (c.saslMechanism && c.saslPassword === undefined && c.saslPasswordFile === undefined) {
      ctx.addIssue({ code: 'custom', path: ['saslPassword'], message: 'required with saslMechanism (or saslPasswordFile)' });
    }
    for (const [cert, key] of [
      ['pgSslcert', 'pgSslkey'],
      ['kafkaSslCert', 'kafkaSslKey'],
    ] as const) {
      if ((c[cert] === undefined) !== (c[key] === undefined))
        ctx.addIssue({ code: 'custom', path: [c[cert] ? key : cert], message: `${cert} and ${key} go together` });
    }
    if (c.pgSslmode === 'disable' && (c.pgSslrootcert || c.pgSslcert)) {
      ctx.addIssue({ code: 'custom', path: ['pgSslmode'], message: 'is disable, but TLS files are given' });
    }
  })
  // Secrets given as files (--database-url-file, --sasl-password-file) are read
  // once here, so everything downstream sees one value; the path stays for the log.
  .transform((c, ctx) => {
    const read = (key: 'databaseUrlFile' | 'saslPasswordFile'): string | undefined => {
      const file = c[key];
      if (file === undefined) return undefined;
      try {
        return readSecretFile(file);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [key], message: (error as Error).message });
        return undefined;
      }
    };
    const databaseUrl = read('databaseUrlFile');
    const saslPassword = read('saslPasswordFile');
    const transactionalId = c.transactionalId ?? (c.slot !== undefined ? `outbox-tail-${c.slot}` : undefined);
    return {
      ...c,
      ...(transactionalId !== undefined ? { transactionalId } : {}),
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      ...(saslPassword !== undefined ? { saslPassword } : {}),
    };
  });

/** Every option's default: what an empty config resolves to. */
export const configDefaults: Readonly<z.output<typeof configSchema>> = Object.freeze(configSchema.parse({}));
