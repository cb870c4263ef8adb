import type pg from 'pg';
import type { Logger } from 'pino';
import { columnMapping } from '../../pipeline/assemble/outbox-columns.js';
import type { Transaction } from '../../pipeline/outbox-event.js';
import { isMalformed, RowMapper } from '../../pipeline/assemble/row-mapper.js';
import { Lsn } from '../../shared/lsn.js';
import { createKafkaSink, type SinkSettings } from '../../sink/create-sink.js';
import { createRecordBuilder, type RecordFormatSettings } from '../../pipeline/publish/record-format/create-record-builder.js';
import { embedsPayload } from '../../pipeline/publish/record-format/record-formats.js';
import type { SinkRecord } from '../../sink/sink-record.js';
import { createValueEncoder, type ValueFormatSettings } from '../../pipeline/publish/record-format/value-encoder.js';
import type { TimeWindow } from '../time-window.js';
import { collectWindow, dropWindow, MISSING_ROWS, openWindow, type VerifySettings } from '../verify/verify-outbox.js';

/** What replay uses: verify's window and record format, the value format, and the sink's settings (published at least once, whatever --delivery says). */
export interface ReplaySettings
  extends VerifySettings, SinkSettings, Pick<RecordFormatSettings, 'recordFormat' | 'cloudeventsSource'>, Partial<ValueFormatSettings> {}

export interface ReplayOptions {
  window: TimeWindow;
  /** Only the rows `verify` reports missing. */
  onlyMissing: boolean;
  /** Select and count, publish nothing. */
  dryRun: boolean;
  marginMs: number;
  /** Rows fetched and published per Kafka request. */
  batchSize: number;
}

export interface ReplayReport {
  table: string;
  from: string;
  to: string;
  onlyMissing: boolean;
  dryRun: boolean;
  /** What the rows were sent in order of: commit time when PostgreSQL tracks it, else the created-at column. */
  order: 'commit_timestamp' | 'created_at';
  selected: number;
  published: number;
  /** Rows that cannot become records (as the relay's --on-malformed would see them): never sent, listed. */
  malformed: { id: string | null; reason: string }[];
  topics: Record<string, number>;
  seconds: number;
}

/** No replication transaction stands behind a replayed row: the record carries no commit_lsn, and says it is a replay. */
const REPLAY_TXN: Transaction = { seq: 0, xid: 0, commitLsn: Lsn.of(0n), commitTime: 0n, endLsn: null };
const RAW_TEXT = { getTypeParser: () => (value: string) => value };

/**
 * `outbox-tail replay`: republishes the rows created in the window from the
 * table, with the relay's record format and an idempotent at-least-once
 * producer. Rows are read through a cursor in one REPEATABLE READ snapshot
 * and sent a batch at a time, each batch acknowledged before the next is
 * fetched, so memory stays at one batch. Order: see docs/verify-replay-recover-prune.md (Order).
 */
export async function replayOutbox(client: pg.Client, config: ReplaySettings, options: ReplayOptions, logger: Logger): Promise<ReplayReport> {
  const started = Date.now();
  const { sql, table, col, from, to } = options.onlyMissing
    ? await collectWindow(client, config, { window: options.window, marginMs: options.marginMs })
    : await openWindow(client, config, options.window);
  const [{ setting }] = (await sql<{ setting: string }>(`select current_setting('track_commit_timestamp') as setting`)) as [{ setting: string }];
  const order = setting === 'on' ? 'commit_timestamp' : 'created_at';
  // Within one transaction, ctid order is insert order unless a row landed in free space of an earlier page.
  const orderBy = order === 'commit_timestamp' ? `pg_xact_commit_timestamp(o.xmin) nulls first, o.${col.createdAt}, o.ctid` : `o.${col.createdAt}, o.ctid`;
  const onlyMissing = options.onlyMissing ? `and o.${col.id}::text in (select m.id from (${MISSING_ROWS}) m)` : '';

  const mapper = new RowMapper(columnMapping(config), config.table, { jsonPayload: embedsPayload(config.recordFormat) });
  const builder = createRecordBuilder(config);
  const encoder = createValueEncoder(config);
  const replayedAt = new Date(started).toISOString();
  const sink = options.dryRun ? null : createKafkaSink({ ...config, delivery: 'at-least-once' }, logger);
  const report: ReplayReport = {
    table: config.table,
    from,
    to,
    onlyMissing: options.onlyMissing,
    dryRun: options.dryRun,
    order,
    selected: 0,
    published: 0,
    malformed: [],
    topics: {},
    seconds: 0,
  };
  try {
    await sink?.connect();
    await sql('begin isolation level repeatable read read only');
    await sql(
      `declare outbox_tail_replay no scroll cursor for
         select o.* from ${table} o where o.${col.createdAt} >= $1 and o.${col.createdAt} < $2 ${onlyMissing} order by ${orderBy}`,
      [from, to],
    );
    for (;;) {
      const result = await client.query({ text: `fetch ${options.batchSize} from outbox_tail_replay`, rowMode: 'array', types: RAW_TEXT });
      if (result.rows.length === 0) break;
      if (report.selected === 0) mapper.onRelation(result.fields.map((f, i) => ({ name: f.name, typeOid: f.dataTypeID, typeMod: -1, isKey: i === 0 })));
      const records: SinkRecord[] = [];
      for (const row of result.rows as (string | null)[][]) {
        report.selected++;
        const event = mapper.map(
          row.map((v) => (v === null ? null : Buffer.from(v, 'utf8'))),
          REPLAY_TXN,
        );
        if (isMalformed(event)) {
          report.malformed.push({ id: event.id, reason: event.reason });
          continue;
        }
        const record = builder.build(event);
        const misrouted = builder.misrouted(record);
        if (misrouted !== null) {
          report.malformed.push({ id: event.id, reason: misrouted });
          continue;
        }
        if (encoder) {
          // --value-format: as the relay encodes it; a payload its schema refuses is listed, never sent.
          const encoded = encoder.tryEncode(record, event) ?? (await encoder.encode(record, event));
          if (!encoded.ok) {
            report.malformed.push({ id: event.id, reason: `schema: ${encoded.reason}` });
            continue;
          }
          record.value = encoded.value;
        }
        delete record.headers.commit_lsn;
        record.headers.outbox_tail_replay = replayedAt;
        records.push(record);
        report.topics[record.topic] = (report.topics[record.topic] ?? 0) + 1;
      }
      if (sink && records.length > 0) await sink.send(records);
      if (sink) report.published += records.length;
      logger.debug({ event: 'replay-batch', selected: report.selected, published: report.published }, 'replay batch');
    }
    await sql('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    await sink?.disconnect();
    await dropWindow(sql).catch(() => undefined);
  }
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}
