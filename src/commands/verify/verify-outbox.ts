import type { IHeaders } from 'kafkajs';
import { commandKafka, withKafkaAdmin } from '../../kafka/kafkajs/with-kafka-admin.js';
import type pg from 'pg';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { readTopicRange, type PartitionRange } from '../../kafka/kafkajs/read-topic-range.js';
import type { OutboxEvent } from '../../pipeline/outbox-event.js';
import { splitTable } from '../../postgres/qualified-table.js';
import { TIMESTAMPTZ_OID, toRfc3339 } from '../../pipeline/assemble/rfc3339-timestamp.js';
import { sqlOn, type Sql } from '../../postgres/sql.js';
import type { KafkaConnectionSettings } from '../../kafka/kafka-client-options.js';
import type { ColumnSettings } from '../../pipeline/assemble/outbox-columns.js';
import type { RecordHeaderName } from '../../pipeline/publish/record-format/record-headers.js';
import { compileTopicTemplate } from '../../pipeline/publish/record-format/topic-template.js';
import type { TimeWindow } from '../time-window.js';

/** What verify (and replay, which reuses its window) reads: the table, its columns, the record format, the Kafka connection. */
export interface VerifySettings extends ColumnSettings, KafkaConnectionSettings {
  table: string;
  topic: string;
  recordHeaders: readonly RecordHeaderName[];
}

export interface VerifyOptions {
  window: TimeWindow;
  /** How far before --from the Kafka side starts reading (record timestamps against the database's clock). */
  marginMs: number;
  /** How many missing and unknown ids to list per topic. */
  list: number;
}

export interface TopicVerification {
  topic: string;
  /** False when the broker has no such topic: every row of it is missing. */
  exists: boolean;
  rows: number;
  records: number;
  distinctIds: number;
  missing: number;
  /** Distinct ids in Kafka (created_at in the window) that no row of the table has. */
  unknown: number;
  missingIds: string[];
  unknownIds: string[];
}

export interface VerifyReport {
  table: string;
  from: string;
  to: string;
  kafkaFrom: string;
  topics: TopicVerification[];
  rows: number;
  records: number;
  missing: number;
  unknown: number;
  /** Records read that carry no id or no created_at header: not comparable, counted only. */
  recordsWithoutHeaders: number;
  seconds: number;
}

/** How long a partition may deliver nothing before its end while verify reads it. */
const STALL_TIMEOUT_MS = 60_000;

/** `2026-12-01T12:27:21.696420Z`, the created_at header's form, whose string order is time order. */
const headerTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** The outbox id and created_at of a record in any --record-format: the relay's headers, ce_ headers, or a structured CloudEvent's attributes. */
function idAndTime(headers: IHeaders | undefined, value: Buffer | null): { id: string | undefined; raw: string | undefined } {
  const id = header(headers, 'id') ?? header(headers, 'ce_id');
  if (id !== undefined) return { id, raw: header(headers, 'created_at') ?? header(headers, 'ce_time') };
  if (value === null || !header(headers, 'content-type')?.startsWith('application/cloudevents+json')) return { id: undefined, raw: undefined };
  try {
    const event = JSON.parse(value.toString('utf8')) as { id?: unknown; time?: unknown };
    return { id: typeof event.id === 'string' ? event.id : undefined, raw: typeof event.time === 'string' ? event.time : undefined };
  } catch {
    return { id: undefined, raw: undefined };
  }
}

/**
 * `outbox-tail verify`: the outbox ids created in the window against the ids
 * in Kafka (the `id` header) over the same window (the `created_at` header),
 * per topic of the topic template. Both sides are streamed into temporary
 * tables of the database, which does the set arithmetic on disk: the process
 * holds one Kafka batch at a time, whatever the window's size.
 */
export async function verifyOutbox(client: pg.Client, config: VerifySettings, options: VerifyOptions): Promise<VerifyReport> {
  const started = Date.now();
  const { sql, table, col, topics, existing, from, to, kafkaFromMs, recordsWithoutHeaders } = await collectWindow(client, config, options);
  const counts = await sql<{ topic: string; rows: string; records: string; distinct_ids: string; missing: string; unknown: string }>(
    `select t.topic,
            (select count(*) from outbox_tail_verify_rows r where r.topic = t.topic) as rows,
            (select count(*) from outbox_tail_verify_kafka k where k.topic = t.topic) as records,
            (select count(distinct id) from outbox_tail_verify_kafka k where k.topic = t.topic) as distinct_ids,
            (select count(*) from (${MISSING_ROWS}) m where m.topic = t.topic) as missing,
            (select count(distinct k.id) from outbox_tail_verify_kafka k where k.topic = t.topic
                and not exists (select 1 from ${table} o where o.${col.id}::text = k.id)) as unknown
       from unnest($1::text[]) as t(topic) order by t.topic`,
    [topics],
  );
  const report: TopicVerification[] = [];
  for (const c of counts) {
    const missingIds =
      Number(c.missing) === 0
        ? []
        : (await sql<{ id: string }>(`select m.id from (${MISSING_ROWS}) m where m.topic = $1 order by m.id limit $2`, [c.topic, options.list])).map(
            (r) => r.id,
          );
    const unknownIds =
      Number(c.unknown) === 0
        ? []
        : (
            await sql<{ id: string }>(
              `select distinct k.id from outbox_tail_verify_kafka k where k.topic = $1
                  and not exists (select 1 from ${table} o where o.${col.id}::text = k.id) order by k.id limit $2`,
              [c.topic, options.list],
            )
          ).map((r) => r.id);
    report.push({
      topic: c.topic,
      exists: existing.has(c.topic),
      rows: Number(c.rows),
      records: Number(c.records),
      distinctIds: Number(c.distinct_ids),
      missing: Number(c.missing),
      unknown: Number(c.unknown),
      missingIds,
      unknownIds,
    });
  }
  await dropWindow(sql);
  const sum = (key: 'rows' | 'records' | 'missing' | 'unknown') => report.reduce((n, t) => n + t[key], 0);
  return {
    table: config.table,
    from,
    to,
    kafkaFrom: new Date(kafkaFromMs).toISOString(),
    topics: report,
    rows: sum('rows'),
    records: sum('records'),
    missing: sum('missing'),
    unknown: sum('unknown'),
    recordsWithoutHeaders,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** The window's bounds and the table's quoted names, once the table and its columns are checked. */
export interface OpenedWindow {
  sql: Sql;
  table: string;
  col: { id: string; aggregateType: string; eventType: string; createdAt: string };
  from: string;
  to: string;
}

/** The temporary tables verify and replay --only-missing read: the window's rows and the ids found in Kafka. */
export interface CollectedWindow extends OpenedWindow {
  topics: string[];
  existing: Set<string>;
  kafkaFromMs: number;
  recordsWithoutHeaders: number;
}

/** SQL selecting the window's rows (`outbox_tail_verify_rows`: id, topic) that Kafka has no record of. */
export const MISSING_ROWS = `select r.id, r.topic from outbox_tail_verify_rows r
  where not exists (select 1 from outbox_tail_verify_kafka k where k.topic = r.topic and k.id = r.id)`;

export async function openWindow(client: pg.Client, config: VerifySettings, window: TimeWindow): Promise<OpenedWindow> {
  const [schema, name] = splitTable(config.table);
  const table = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
  const col = {
    id: client.escapeIdentifier(config.columnId),
    aggregateType: client.escapeIdentifier(config.columnAggregateType),
    eventType: client.escapeIdentifier(config.columnEventType),
    createdAt: client.escapeIdentifier(config.columnCreatedAt),
  };
  const sql = sqlOn(client, `reading ${config.table}`);
  await checkColumns(sql, config, schema, name);
  return { sql, table, col, from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() };
}

/** Fills the temporary tables: the rows created in the window, and the ids of the window's records in Kafka. */
export async function collectWindow(client: pg.Client, config: VerifySettings, options: Omit<VerifyOptions, 'list'>): Promise<CollectedWindow> {
  if (!config.recordHeaders.includes('created_at')) {
    throw new OutboxTailError(
      'CONFIG_INVALID',
      'verify and replay --only-missing: --record-headers leaves out created_at, so records in Kafka cannot be placed in the window',
      {
        hint: 'verify needs the relay to send created_at: add it to --record-headers (the default sends it)',
        exitCode: EXIT.CONFIG,
      },
    );
  }
  const { window } = options;
  const opened = await openWindow(client, config, window);
  const { sql, table, col, from, to } = opened;
  await dropWindow(sql);
  await sql(`create temp table outbox_tail_verify_topics (aggregate_type text, event_type text, topic text) on commit preserve rows`);
  await sql(`create temp table outbox_tail_verify_kafka (topic text not null, id text not null) on commit preserve rows`);
  const kinds = await sql<{ aggregate_type: string; event_type: string }>(
    `select distinct ${col.aggregateType}::text as aggregate_type, ${col.eventType}::text as event_type from ${table}
      where ${col.createdAt} >= $1 and ${col.createdAt} < $2`,
    [from, to],
  );
  const topicOf = compileTopicTemplate(config.topic);
  const kindTopics = kinds.map((k) => topicOf({ aggregateType: k.aggregate_type, eventType: k.event_type, table: config.table } as OutboxEvent));
  await sql(`insert into outbox_tail_verify_topics select * from unnest($1::text[], $2::text[], $3::text[])`, [
    kinds.map((k) => k.aggregate_type),
    kinds.map((k) => k.event_type),
    kindTopics,
  ]);
  const topics = [...new Set(kindTopics)].sort();
  await sql(
    `create temp table outbox_tail_verify_rows on commit preserve rows as
       select o.${col.id}::text as id, t.topic from ${table} o
         join outbox_tail_verify_topics t on o.${col.aggregateType}::text = t.aggregate_type and o.${col.eventType}::text = t.event_type
        where o.${col.createdAt} >= $1 and o.${col.createdAt} < $2`,
    [from, to],
  );
  const kafkaFromMs = window.fromMs - options.marginMs;
  const { existing, recordsWithoutHeaders } = await readKafkaIds(config, topics, kafkaFromMs, window, async (topic, ids) => {
    await sql(`insert into outbox_tail_verify_kafka select $1, unnest($2::text[])`, [topic, ids]);
  });
  await sql(`create index on outbox_tail_verify_kafka (topic, id)`);
  await sql(`analyze outbox_tail_verify_kafka`);
  await sql(`analyze outbox_tail_verify_rows`);
  return { ...opened, topics, existing, kafkaFromMs, recordsWithoutHeaders };
}

export async function dropWindow(sql: Sql): Promise<void> {
  await sql(`drop table if exists outbox_tail_verify_topics, outbox_tail_verify_kafka, outbox_tail_verify_rows`);
}

/** The table and the columns verify reads must exist: the window is found by the created-at column. */
async function checkColumns(sql: Sql, config: VerifySettings, schema: string, name: string): Promise<void> {
  const columns = new Set(
    (await sql<{ column_name: string }>(`select column_name from information_schema.columns where table_schema = $1 and table_name = $2`, [schema, name])).map(
      (r) => r.column_name,
    ),
  );
  if (columns.size === 0) {
    throw new OutboxTailError('TABLE_MISSING', `verify: table ${config.table} does not exist (or this role cannot see it)`, {
      hint: 'name the outbox table with --table, or run `outbox-tail init`',
    });
  }
  if (!columns.has(config.columnCreatedAt)) {
    throw new OutboxTailError(
      'COLUMN_MISSING',
      `verify: table ${config.table} has no column ${config.columnCreatedAt}; verify finds the window's rows by their creation time`,
      {
        hint: `name the table's creation-time column with --column-created-at, or add one: ALTER TABLE ${config.table} ADD COLUMN created_at timestamptz NOT NULL DEFAULT now()`,
      },
    );
  }
  const missing = [config.columnId, config.columnAggregateType, config.columnEventType].filter((c) => !columns.has(c));
  if (missing.length > 0) {
    throw new OutboxTailError('COLUMN_MISSING', `verify: table ${config.table} has no column(s) ${missing.join(', ')}`, {
      hint: 'map the columns with the --column-* options, as for the relay',
    });
  }
}

/** Streams the ids of every record in `topics` from `fromMs` on whose created_at header lies in the window. */
async function readKafkaIds(
  config: VerifySettings,
  topics: readonly string[],
  fromMs: number,
  window: TimeWindow,
  insert: (topic: string, ids: string[]) => Promise<void>,
): Promise<{ existing: Set<string>; recordsWithoutHeaders: number }> {
  const kafka = commandKafka(config, { name: 'verify', retries: 3 });
  const ranges: PartitionRange[] = [];
  const existing = await withKafkaAdmin(kafka, `verify: reading the offsets of ${topics.join(', ')}`, async (admin) => {
    const all = new Set(await admin.listTopics());
    const present = new Set(topics.filter((t) => all.has(t)));
    for (const topic of present) {
      const starts = await admin.fetchTopicOffsetsByTimestamp(topic, Math.max(0, fromMs));
      const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
      for (const s of starts) ranges.push({ topic, partition: s.partition, start: BigInt(s.offset), end: ends.get(s.partition) ?? 0n });
    }
    return present;
  });
  const lo = headerTime(window.fromMs);
  const hi = headerTime(window.toMs);
  let recordsWithoutHeaders = 0;
  await readTopicRange(
    kafka,
    ranges,
    async (topic, _partition, messages) => {
      const ids: string[] = [];
      for (const m of messages) {
        const { id, raw } = idAndTime(m.headers, m.value);
        if (id === undefined || raw === undefined) {
          recordsWithoutHeaders++;
          continue;
        }
        // Records of relays before the RFC 3339 header carry PostgreSQL's text form: compare them in the same form.
        const createdAt = raw.endsWith('Z') ? raw : toRfc3339(raw, TIMESTAMPTZ_OID);
        if (createdAt >= lo && createdAt < hi) ids.push(id);
      }
      if (ids.length > 0) await insert(topic, ids);
    },
    { groupPrefix: `outbox-tail-verify`, stallTimeoutMs: STALL_TIMEOUT_MS },
  );
  return { existing, recordsWithoutHeaders };
}
