import { z } from 'zod';
import { COMPRESSIONS } from '../kafka/compression-codecs.js';
import { DEFAULT_MESSAGE_PREFIX } from '../pipeline/assemble/message-content.js';
import { DEFAULT_OUTBOX_COLUMNS as COLUMNS, DEFAULT_OUTBOX_TABLE } from '../pipeline/assemble/outbox-columns.js';
import { hasPostgresScheme } from '../shared/has-postgres-scheme.js';
import { hasUserinfo } from '../shared/has-userinfo.js';
import { MAX_TIMER_MS } from '../shared/max-timer-ms.js';
import { readSecretFile } from '../shared/read-secret-file.js';
import { MAX_SHARDS, parseShard, shardName, shardNamesTooLong } from '../shared/shard-spec.js';
import { RECORD_HEADER_NAMES } from '../pipeline/publish/record-format/record-headers.js';
import { DEFAULT_CLOUDEVENTS_SOURCE, RECORD_FORMATS } from '../pipeline/publish/record-format/record-formats.js';
import { checkSchemaRegistryOptions, schemaRegistryOptions } from './schema-registry-options.js';

/**
 * The one config schema: every option, its type, its default and its
 * description (`.meta()`, see option-meta.ts). Flags, env vars and config
 * files all feed this same flat shape (options.ts derives their names);
 * `--help` and docs/configuration.md (npm run docs) print what is here.
 */
const int = (min: number) => z.coerce.number().int().min(min);

/** A delay in ms: at most what a Node timer takes (a longer one fires after 1 ms). */
const ms = (min: number) => int(min).max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest Node timer)`);
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
/** The value is not quoted: it may hold a password (issue 42). */
const NOT_A_POSTGRES_URL = 'must be a postgres:// or postgresql:// URL (the value is not shown: it may hold a password)';
const listenAddress = z
  .string()
  .trim()
  .regex(/^(off|(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5})$/, 'expected host:port (e.g. 127.0.0.1:9464, [::1]:9464) or off')
  // Checked here, not when the server starts after preflight: there a bad port was an unexpected error, restarted in a loop.
  .refine((l) => Number(/:(\d+)$/.exec(l)?.[1] ?? 0) <= 65535, 'the port is at most 65535');

export const configSchema = z
  .object({
    slot: z
      .string()
      .regex(/^[a-z0-9_]{1,63}$/, 'slot names are 1-63 characters of a-z, 0-9 and _ (PostgreSQL rule)')
      .optional()
      .meta({
        group: 'Source',
        description: 'Logical replication slot to tail (pgoutput). Required by run, status, prune and recover; init creates it when given',
      }),
    publication: identifier.default('outbox_tail').meta({ group: 'Source', description: 'Publication containing the outbox table' }),
    table: z
      .string()
      .trim()
      .regex(/^[^.\s]+(\.[^.\s]+)?$/, 'expected "schema.table" or "table"')
      .transform((t) => (t.includes('.') ? t : `public.${t}`))
      .default(DEFAULT_OUTBOX_TABLE)
      .meta({ group: 'Source', description: 'Outbox table, "schema.table" ("table" alone is in public)' }),
    source: z.enum(['table', 'messages', 'both']).default('table').meta({
      group: 'Source',
      description:
        'Where events come from: outbox table INSERTs, transactional logical decoding messages with --message-prefix (outbox_tail.emit, no table), or both',
    }),
    messagePrefix: z.string().min(1).max(255).default(DEFAULT_MESSAGE_PREFIX).meta({
      group: 'Source',
      description: 'Prefix of the logical decoding messages that carry outbox events (--source messages|both); messages with other prefixes are ignored',
    }),
    shard: z
      .string()
      .trim()
      .regex(/^\d+\/\d+$/, 'expected i/N, e.g. 0/2')
      .optional()
      .meta({
        group: 'Source',
        description:
          'Run one shard i/N of a sharded outbox (outbox-tail init --shards N): slot <slot>_i, publication <publication>_i, message prefix <message-prefix>_i, transactional id suffixed _i (docs/sharding.md)',
      }),
    shards: int(1).max(MAX_SHARDS).optional().meta({
      group: 'Source',
      description: 'Number of shards: init creates N publications with row filters and N slots; status shows every shard (docs/sharding.md)',
    }),
    heartbeatIntervalMs: ms(0).default(0).meta({
      group: 'Source',
      description:
        'Emit a non-transactional heartbeat message (prefix <message-prefix>-heartbeat) when nothing was streamed for this long, so the walsender has a position to report and the slot advances on a quiet database (0 = off)',
    }),
    databaseUrl: z
      .string()
      .trim()
      .min(1)
      .refine(hasPostgresScheme, NOT_A_POSTGRES_URL)
      .optional()
      .meta({
        group: 'PostgreSQL connection',
        description: 'PostgreSQL URL; without it the libpq PG* variables apply',
        envAliases: ['DATABASE_URL'],
        secret: true,
      }),
    primaryUrl: z.string().trim().min(1).refine(hasPostgresScheme, NOT_A_POSTGRES_URL).optional().meta({
      group: 'PostgreSQL connection',
      description:
        "With --database-url on a hot standby (PostgreSQL 16+): the primary's URL, used only for what must run there: pg_log_standby_snapshot() while a slot is created on the standby (docs/standby-decoding.md)",
      secret: true,
    }),
    brokers: list.default(['localhost:9092']).meta({ group: 'Kafka connection', description: 'Kafka bootstrap brokers, comma separated' }),
    clientId: identifier.default('outbox-tail').meta({ group: 'Kafka connection', description: 'Kafka client id' }),
    topic: z
      .string()
      .trim()
      .min(1)
      .refine((t) => !/\{(?!aggregate_type\}|event_type\}|table\})[^}]*\}/.test(t), 'unknown placeholder; use {aggregate_type}, {event_type} or {table}')
      .default('outbox.event.{aggregate_type}')
      .meta({ group: 'Records and topics', description: 'Topic template: {aggregate_type}, {event_type} and {table} are replaced per record' }),
    // Fewer headers cost the relay and the broker less per record (docs/performance.md).
    recordHeaders: z
      .preprocess((v) => (typeof v === 'string' ? v.split(',') : v), z.array(z.string().trim().pipe(z.enum(RECORD_HEADER_NAMES))).min(1))
      .refine((h) => h.includes('id'), 'must include id: the idempotent consumer and verify find each event by it')
      .transform((h) => [...new Set(h)])
      .default([...RECORD_HEADER_NAMES])
      .meta({
        group: 'Records and topics',
        description:
          'Standard headers on every record, comma separated: id is required (consumers deduplicate on it), verify needs created_at; fewer headers cost less per record',
      }),
    recordFormat: z.enum(RECORD_FORMATS).default('default').meta({
      group: 'Records and topics',
      description:
        'Record layout: default (outbox-tail headers, value = payload), cloudevents-binary (ce_ headers, value = payload) or cloudevents-structured (value = an application/cloudevents+json event whose data is the payload); docs/cloudevents.md',
    }),
    cloudeventsSource: z
      .string()
      .trim()
      .min(1)
      .refine((t) => !/\{(?!aggregate_type\}|table\})[^}]*\}/.test(t), 'unknown placeholder; use {table} or {aggregate_type}')
      .default(DEFAULT_CLOUDEVENTS_SOURCE)
      .meta({
        group: 'Records and topics',
        description:
          'CloudEvents source attribute (--record-format cloudevents-*), a URI reference: {table} ("schema.table", or the message prefix) and {aggregate_type} are replaced per record',
      }),
    ...schemaRegistryOptions,
    columnId: identifier.default(COLUMNS.id).meta({ group: 'Outbox columns', description: 'Column holding the event id (uuid or text)' }),
    columnAggregateType: identifier
      .default(COLUMNS.aggregateType)
      .meta({ group: 'Outbox columns', description: 'Column holding the aggregate type (Debezium: aggregatetype)' }),
    columnAggregateId: identifier
      .default(COLUMNS.aggregateId)
      .meta({ group: 'Outbox columns', description: 'Column holding the aggregate id, used as Kafka key (Debezium: aggregateid)' }),
    columnEventType: identifier.default(COLUMNS.eventType).meta({ group: 'Outbox columns', description: 'Column holding the event type (Debezium: type)' }),
    columnPayload: identifier.default(COLUMNS.payload).meta({ group: 'Outbox columns', description: 'Column holding the payload, forwarded byte for byte' }),
    columnHeaders: identifier
      .default(COLUMNS.headers)
      .meta({ group: 'Outbox columns', description: 'Optional jsonb column whose string entries become Kafka headers' }),
    columnCreatedAt: identifier.default(COLUMNS.createdAt).meta({ group: 'Outbox columns', description: 'Optional column sent as the created_at header' }),
    createSlot: bool
      .default(false)
      .meta({ group: 'Source', description: 'Create the slot if missing (default: a missing slot is an error, it may mean lost events)' }),
    failoverSlot: bool.default(false).meta({
      group: 'Source',
      description: 'Create the slot (init, --create-slot) with failover = true, so standbys with sync_replication_slots = on keep a copy; PostgreSQL 17+ only',
    }),
    allowAutoTopicCreation: bool
      .default(true)
      .meta({ group: 'Records and topics', description: 'Let the broker create missing topics (if the broker allows it)' }),
    // Per-partition batches must stay under the broker's max.message.bytes (1 MiB by default).
    batchMaxMessages: int(1).default(5000).meta({ group: 'Batching and flow control', description: 'Max records per Kafka request' }),
    // ~500 records of ~600 bytes: kafkajs groups a batch per partition by
    // copying the array per message (quadratic), and its encoding garbage is
    // freed only at the next GC; smaller batches cut both at the same catch-up
    // throughput (docs/performance.md).
    batchMaxBytes: int(1024)
      .default(300_000)
      .meta({ group: 'Batching and flow control', description: "Max bytes per Kafka request (keep under the broker's max.message.bytes)" }),
    batchMaxWaitMs: ms(0).default(0).meta({ group: 'Batching and flow control', description: 'Wait this long for a batch to fill (0 = send when ready)' }),
    // A few batches ahead of the one being sent is enough to keep Kafka busy
    // (2,500 = five 300 kB batches of ~600-byte records); every in-flight
    // record costs ~2 kB of heap, and records queued longer than two
    // scavenges are promoted: 2,500 kept catch-up throughput and cut ~7 MB
    // off its peak RSS against 5,000 (docs/performance.md).
    maxInFlightMessages: int(1)
      .default(2_500)
      .meta({ group: 'Batching and flow control', description: 'Pause replication above this many unacknowledged records' }),
    maxInFlightBytes: int(1024)
      .default(16 * 1024 * 1024)
      .meta({ group: 'Batching and flow control', description: 'Pause replication above this many unacknowledged bytes' }),
    onOversize: policy
      .default('fail')
      .meta({ group: 'Bad input and lost slots', description: 'A record Kafka rejects as too large: fail (exit), or send a pointer to --dead-letter-topic' }),
    onMalformed: policy.default('fail').meta({
      group: 'Bad input and lost slots',
      description:
        'A row with a mapped column NULL or missing, a message whose content does not parse, a non-transactional message: fail (exit), or send a pointer to --dead-letter-topic',
    }),
    onSlotLost: z.enum(['halt', 'recover']).default('halt').meta({
      group: 'Bad input and lost slots',
      description:
        'A slot dropped or invalidated: halt (exit 4), or recreate it and backfill from the table since the recorded position (as outbox-tail recover; at-least-once only)',
    }),
    recoverMarginMs: ms(0).default(3_600_000).meta({
      group: 'Bad input and lost slots',
      description: 'Recovering a lost slot: backfill from this long before the recorded position (the longest outbox transaction)',
    }),
    deadLetterTopic: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]{1,249}$/, 'Kafka topic names use A-Z a-z 0-9 . _ - (at most 249)')
      .optional()
      .meta({ group: 'Bad input and lost slots', description: 'Topic for dead-letter pointer records (required by a dead-letter policy)' }),
    logLevel: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .default('info')
      .meta({ group: 'Observability', description: 'Log level (JSON logs on stdout)' }),
    statusIntervalMs: ms(100)
      .default(1000)
      .meta({ group: 'PostgreSQL connection', description: 'How often the relay sends a standby status update (its confirmed position) to PostgreSQL' }),
    restartBackoffInitialMs: ms(1).default(500).meta({ group: 'Runtime', description: 'First restart delay after a failure' }),
    restartBackoffMaxMs: ms(1).default(30_000).meta({ group: 'Runtime', description: 'Longest restart delay (the delay doubles per failure up to it)' }),
    standbyRetryMs: ms(100).default(2000).meta({ group: 'Runtime', description: 'How often a standby retries a slot held by another relay' }),
    shutdownTimeoutMs: ms(100).default(30_000).meta({ group: 'Runtime', description: 'On SIGTERM, how long to wait for in-flight records' }),
    connectTimeoutMs: ms(100).default(10_000).meta({ group: 'Runtime', description: 'Connection timeout for PostgreSQL and Kafka' }),
    replicationTimeoutMs: ms(0).default(60_000).meta({
      group: 'PostgreSQL connection',
      description:
        "Reconnect when PostgreSQL sent nothing on the replication connection for this long (a keepalive is requested at half of it), like wal_receiver_timeout; keep it at least the server's wal_sender_timeout; 0 = never",
    }),
    kafkaRetries: int(0).default(5).meta({ group: 'Kafka connection', description: 'Producer retries before the relay restarts from the slot' }),
    // kafkajs's requestTimeout.
    kafkaRequestTimeoutMs: ms(100).default(30_000).meta({
      group: 'Kafka connection',
      description: 'A Kafka request unanswered this long fails and is retried; how soon a connection that went silent (network cut) is given up',
    }),
    kafkaClient: z.enum(['kafkajs', 'platformatic']).default('kafkajs').meta({
      group: 'Kafka connection',
      description: 'Kafka client library of the producer: kafkajs, or @platformatic/kafka (less CPU per record; at-least-once only)',
    }),
    // Kafka keeps a partition's order with up to 5 requests in flight per connection, for an idempotent producer
    // whose sequence numbers the client never rewrites while requests are in flight: our pipelined producer on
    // kafkajs's connections and @platformatic/kafka with the producer id pinned per session do that
    // (docs/architecture.md#pipelined-produce-chain). Kafka transactions keep one request in flight.
    maxInFlightRequests: int(1).max(5).default(1).meta({
      group: 'Kafka connection',
      description:
        'Produce requests in flight per broker connection, order kept by the idempotent producer (above 1: --delivery at-least-once and --sink-thread main; docs/performance.md#the-pipelined-produce-chain has why the default is 1)',
    }),
    compression: z.enum(COMPRESSIONS).default('none').meta({
      group: 'Kafka connection',
      description:
        'Codec of every record batch the relay writes (records, dead letters, exactly-once watermarks), on both clients: none, gzip, snappy, lz4 or zstd (docs/performance.md#compression has the measurements)',
    }),
    sinkThread: z.enum(['main', 'worker']).default('main').meta({
      group: 'Kafka connection',
      description: 'Where the Kafka client runs: main (one thread), or worker (a worker thread: a second core for Kafka encoding and I/O)',
    }),
    delivery: z.enum(['at-least-once', 'exactly-once']).default('at-least-once').meta({
      group: 'Delivery',
      description:
        'exactly-once: Kafka transactions carrying whole PostgreSQL transactions and the slot position; read_committed consumers see each outbox row once (kafkajs client only)',
    }),
    // Set below when not given: one transactional id per slot, so a second relay of the slot fences the first.
    transactionalId: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .optional()
      .meta({ group: 'Delivery', description: 'Kafka transactional.id in exactly-once mode (default outbox-tail-<slot>); one per slot' }),
    offsetsTopic: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]{1,249}$/, 'Kafka topic names use A-Z a-z 0-9 . _ - (at most 249)')
      .default('outbox-tail.offsets')
      .meta({ group: 'Delivery', description: "Compacted topic holding each slot's watermark in exactly-once mode (outbox-tail init creates it)" }),
    // Kafka's producer default.
    transactionTimeoutMs: ms(1000).default(60_000).meta({
      group: 'Delivery',
      description:
        "Kafka transaction timeout in exactly-once mode: the longest a PostgreSQL transaction may take to publish (at most the broker's transaction.max.timeout.ms, 15 min by default)",
    }),
    // The coordinator writes the previous transaction's markers while the next one begins.
    transactionLanes: int(1).max(4).default(2).meta({
      group: 'Delivery',
      description:
        "Transactional producers taking turns in exactly-once mode (ids <transactional-id>, <transactional-id>.2, ...): each Kafka transaction begins while the previous one's commit markers are still being written",
    }),
    databaseUrlFile: path.optional().meta({
      group: 'PostgreSQL connection',
      description:
        'Read the PostgreSQL URL from this file, again at every connection (keeps the password out of argv and env; a rotated file is used on reconnect)',
    }),
    pgPasswordFile: path.optional().meta({
      group: 'PostgreSQL connection',
      description:
        "Read the PostgreSQL password from this file at every connection (a Vault agent's or Kubernetes secret's file); overrides the URL's password",
    }),
    pgPasswordCommand: z.string().trim().min(1).optional().meta({
      group: 'PostgreSQL connection',
      description:
        'Run this command (with /bin/sh) at every connection; its standard output is the PostgreSQL password (vault read, gcloud sql generate-login-token, aws rds generate-db-auth-token). Its output is never logged; it must finish within --connect-timeout-ms',
    }),
    pgAuth: z.enum(['password', 'rds-iam']).default('password').meta({
      group: 'PostgreSQL connection',
      description:
        "password: the URL's, a file's or a command's; rds-iam: an RDS/Aurora IAM token signed at every connection with the default AWS credential chain (requires --pg-sslmode)",
    }),
    awsRegion: z
      .string()
      .trim()
      .min(1)
      .optional()
      .meta({
        group: 'PostgreSQL connection',
        description: "AWS region for --pg-auth rds-iam (default: the AWS SDK's, from AWS_REGION or the profile)",
        envAliases: ['AWS_REGION'],
      }),
    pgSslmode: z.enum(['disable', 'require', 'verify-ca', 'verify-full']).optional().meta({
      group: 'PostgreSQL connection',
      description: 'TLS to PostgreSQL (libpq meaning; overrides sslmode in the URL); verify-full checks the CA and the host name',
    }),
    pgSslrootcert: path.optional().meta({ group: 'PostgreSQL connection', description: 'CA certificate file (PEM) the server certificate must chain to' }),
    pgSslcert: path.optional().meta({ group: 'PostgreSQL connection', description: 'Client certificate file (PEM), with --pg-sslkey' }),
    pgSslkey: path.optional().meta({ group: 'PostgreSQL connection', description: 'Client private key file (PEM)' }),
    kafkaSsl: bool
      .default(false)
      .meta({ group: 'Kafka connection', description: 'Connect to Kafka over TLS (SSL / SASL_SSL listeners); the host name is verified' }),
    kafkaSslCa: path.optional().meta({ group: 'Kafka connection', description: 'CA certificate file (PEM) for the brokers (default: the system CAs)' }),
    kafkaSslCert: path.optional().meta({ group: 'Kafka connection', description: 'Client certificate file (PEM) for mutual TLS, with --kafka-ssl-key' }),
    kafkaSslKey: path.optional().meta({ group: 'Kafka connection', description: 'Client private key file (PEM)' }),
    saslMechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer', 'aws-msk-iam']).optional().meta({
      group: 'Kafka connection',
      description:
        'SASL mechanism (use with --kafka-ssl: PLAIN sends the password in clear); oauthbearer: OIDC client credentials (--sasl-oauth-*); aws-msk-iam: AWS MSK IAM with the default credential chain (--aws-region)',
    }),
    saslUsername: z.string().trim().min(1).optional().meta({ group: 'Kafka connection', description: 'SASL user name' }),
    saslPassword: z.string().min(1).optional().meta({
      group: 'Kafka connection',
      description: 'SASL password (prefer --sasl-password-file or the env var: argv is visible in ps)',
      secret: true,
    }),
    saslPasswordFile: path.optional().meta({ group: 'Kafka connection', description: 'Read the SASL password from this file' }),
    saslOauthTokenEndpoint: z
      .url({ protocol: /^https?$/ })
      .refine((url) => !hasUserinfo(url), 'must not carry a user or password: give --sasl-oauth-client-id and --sasl-oauth-client-secret-file')
      .optional()
      .meta({
        group: 'Kafka connection',
        description:
          "OAUTHBEARER: the identity provider's token endpoint (client credentials grant), e.g. https://idp/realms/kafka/protocol/openid-connect/token",
      }),
    saslOauthClientId: z.string().trim().min(1).optional().meta({ group: 'Kafka connection', description: 'OAUTHBEARER: the OAuth client id' }),
    saslOauthClientSecret: z.string().min(1).optional().meta({
      group: 'Kafka connection',
      description: 'OAUTHBEARER: the OAuth client secret (prefer --sasl-oauth-client-secret-file or the env var: argv is visible in ps)',
      secret: true,
    }),
    saslOauthClientSecretFile: path.optional().meta({ group: 'Kafka connection', description: 'OAUTHBEARER: read the OAuth client secret from this file' }),
    saslOauthScope: z.string().trim().min(1).optional().meta({ group: 'Kafka connection', description: 'OAUTHBEARER: the scope asked for (space separated)' }),
    saslOauthExtensions: list.optional().meta({
      group: 'Kafka connection',
      description:
        'OAUTHBEARER: SASL extensions sent with the token, key=value comma separated (Confluent Cloud: logicalCluster=lkc-...,identityPoolId=pool-...)',
    }),
    metricsListen: listenAddress.default('127.0.0.1:9464').meta({
      group: 'Observability',
      description:
        'Address of the /metrics, /healthz and /readyz HTTP endpoint: host:port, [v6]:port, port 0 for a random one, or off; an address taken leaves the relay relaying without it (METRICS_LISTEN_FAILED)',
    }),
    stallTimeoutMs: ms(1000)
      .default(120_000)
      .meta({ group: 'Observability', description: 'How long without a confirm while the slot lag grows before /healthz reports a stall' }),
    slotPollIntervalMs: ms(100)
      .default(10_000)
      .meta({ group: 'Observability', description: 'How often slot lag and wal_status are read from pg_replication_slots (over a normal connection)' }),
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
    if (c.maxInFlightRequests > 1 && (c.delivery !== 'at-least-once' || c.sinkThread !== 'main')) {
      // A Kafka transaction's requests go one at a time (kafkajs's transactional producer), and the sink thread's
      // proxy hands one batch over at a time.
      ctx.addIssue({
        code: 'custom',
        path: ['maxInFlightRequests'],
        message: 'more than one produce request in flight needs --delivery at-least-once and --sink-thread main',
      });
    }
    if (c.delivery === 'exactly-once' && c.onSlotLost === 'recover') {
      // The backfill is at least once, and the old watermark would stand behind the new slot (WATERMARK_BEHIND_SLOT).
      ctx.addIssue({
        code: 'custom',
        path: ['onSlotLost'],
        message:
          'recover is not automatic with exactly-once delivery: run `outbox-tail recover`, then delete the watermark (docs/verify-replay-recover-prune.md, outbox-tail recover)',
      });
    }
    let shardCount = c.shards;
    if (c.shard !== undefined) {
      try {
        const { count } = parseShard(c.shard);
        shardCount = count;
        if (c.shards !== undefined && c.shards !== count)
          ctx.addIssue({ code: 'custom', path: ['shard'], message: `is of ${count} shards, but shards is ${c.shards}` });
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['shard'], message: (error as Error).message.split('\n').at(-1)!.trim() });
      }
    }
    // Checked with the shard suffix: PostgreSQL truncates a name past 63 bytes, so two shards could share one slot.
    for (const key of ['slot', 'publication'] as const) {
      const tooLong = c[key] === undefined ? undefined : shardNamesTooLong(c[key], shardCount);
      if (tooLong) ctx.addIssue({ code: 'custom', path: [key], message: tooLong });
    }
    // A template with placeholders is checked per row (RecordBuilder.misrouted); a fixed one can be refused here.
    for (const key of ['deadLetterTopic', 'offsetsTopic'] as const) {
      if (!c.topic.includes('{') && c.topic === c[key])
        ctx.addIssue({ code: 'custom', path: ['topic'], message: `is the ${key}, a topic the relay writes itself` });
    }
    if (c.restartBackoffMaxMs < c.restartBackoffInitialMs) {
      ctx.addIssue({ code: 'custom', path: ['restartBackoffMaxMs'], message: 'must be >= restartBackoffInitialMs' });
    }
    const exclusive = [
      ['databaseUrl', 'databaseUrlFile'],
      ['saslPassword', 'saslPasswordFile'],
      ['saslOauthClientSecret', 'saslOauthClientSecretFile'],
    ] as const;
    for (const [value, file] of exclusive) {
      if (c[value] !== undefined && c[file] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [file], message: `give either ${value} or ${file}, not both` });
      }
    }
    const passwordSources = [
      c.pgPasswordFile !== undefined && 'pgPasswordFile',
      c.pgPasswordCommand !== undefined && 'pgPasswordCommand',
      c.pgAuth === 'rds-iam' && 'pgAuth',
    ].filter((k): k is string => typeof k === 'string');
    if (passwordSources.length > 1) {
      ctx.addIssue({ code: 'custom', path: [passwordSources[1]!], message: `give one password source: ${passwordSources.join(', ')} were given` });
    }
    // libpq refuses verify-ca without a root certificate: with the system's CAs and no host name check, any server
    // holding any publicly signed certificate would pass.
    if (c.pgSslmode === 'verify-ca' && c.pgSslrootcert === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['pgSslmode'],
        message:
          "verify-ca needs --pg-sslrootcert <the CA file the server certificate chains to> (as libpq does); to trust the system's CAs use verify-full, which also checks the host name",
      });
    }
    // The token is the password: without TLS it would cross the network in clear, and RDS refuses IAM logins without TLS.
    if (c.pgAuth === 'rds-iam' && (c.pgSslmode === undefined || c.pgSslmode === 'disable')) {
      ctx.addIssue({
        code: 'custom',
        path: ['pgAuth'],
        message: 'rds-iam requires TLS: add --pg-sslmode verify-full --pg-sslrootcert <the RDS CA bundle, global-bundle.pem>',
      });
    }
    checkSchemaRegistryOptions(c, (path, message) => ctx.addIssue({ code: 'custom', path: [path], message }));
    // A structured CloudEvent is a JSON document with the payload inside; a registry-encoded value would replace it.
    if (c.valueFormat !== 'json' && c.recordFormat === 'cloudevents-structured') {
      ctx.addIssue({
        code: 'custom',
        path: ['valueFormat'],
        message: `valueFormat ${c.valueFormat} cannot be used with recordFormat cloudevents-structured (the event is a JSON document); use cloudevents-binary`,
      });
    }
    const userPassword = c.saslMechanism === 'plain' || c.saslMechanism === 'scram-sha-256' || c.saslMechanism === 'scram-sha-512';
    if (userPassword && !c.saslUsername) ctx.addIssue({ code: 'custom', path: ['saslUsername'], message: 'required with saslMechanism' });
    if (userPassword && c.saslPassword === undefined && c.saslPasswordFile === undefined) {
      ctx.addIssue({ code: 'custom', path: ['saslPassword'], message: 'required with saslMechanism (or saslPasswordFile)' });
    }
    if (c.saslMechanism === 'oauthbearer') {
      for (const key of ['saslOauthTokenEndpoint', 'saslOauthClientId'] as const)
        if (!c[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'required with saslMechanism oauthbearer' });
      if (c.saslOauthClientSecret === undefined && c.saslOauthClientSecretFile === undefined)
        ctx.addIssue({ code: 'custom', path: ['saslOauthClientSecret'], message: 'required with saslMechanism oauthbearer (or saslOauthClientSecretFile)' });
    }
    for (const kv of c.saslOauthExtensions ?? [])
      if (!/^[A-Za-z]+=[\x21-\x7E \t]*$/.test(kv) || kv.startsWith('auth='))
        ctx.addIssue({
          code: 'custom',
          path: ['saslOauthExtensions'],
          message: `${kv}: an extension is key=value with a letters-only key other than auth (RFC 7628)`,
        });
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
    const read = (
      key: 'databaseUrlFile' | 'saslPasswordFile' | 'schemaRegistryPasswordFile' | 'pgPasswordFile' | 'saslOauthClientSecretFile',
    ): string | undefined => {
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
    if (databaseUrl !== undefined && !hasPostgresScheme(databaseUrl))
      ctx.addIssue({
        code: 'custom',
        path: ['databaseUrlFile'],
        message: 'must hold a postgres:// or postgresql:// URL (its text is not shown: it may hold a password)',
      });
    const saslPassword = read('saslPasswordFile');
    const saslOauthClientSecret = read('saslOauthClientSecretFile');
    const schemaRegistryPassword = read('schemaRegistryPasswordFile');
    // Read again at every connection (pg-password-source.ts); read here so a missing file fails at start.
    read('pgPasswordFile');
    // One shard of a sharded outbox: its own slot, publication, prefix and so its own transactional id and watermark.
    const index = c.shard === undefined ? undefined : parseShard(c.shard).index;
    const sharded: { slot?: string; publication?: string; messagePrefix?: string; transactionalId?: string } =
      index === undefined
        ? {}
        : {
            ...(c.slot !== undefined ? { slot: shardName(c.slot, index) } : {}),
            publication: shardName(c.publication, index),
            messagePrefix: shardName(c.messagePrefix, index),
            ...(c.transactionalId !== undefined ? { transactionalId: shardName(c.transactionalId, index) } : {}),
          };
    const slot = sharded.slot ?? c.slot;
    const transactionalId = sharded.transactionalId ?? c.transactionalId ?? (slot !== undefined ? `outbox-tail-${slot}` : undefined);
    return {
      ...c,
      ...sharded,
      ...(transactionalId !== undefined ? { transactionalId } : {}),
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      ...(saslPassword !== undefined ? { saslPassword } : {}),
      ...(saslOauthClientSecret !== undefined ? { saslOauthClientSecret } : {}),
      ...(schemaRegistryPassword !== undefined ? { schemaRegistryPassword } : {}),
    };
  });
