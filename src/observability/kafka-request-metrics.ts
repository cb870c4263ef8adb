import { Counter, Histogram, type Registry } from 'prom-client';
import { isTransactional, type Sink } from '../sink/sink.js';
import { decorateSink } from '../sink/sink-decorator.js';
import type { SinkRecord } from '../sink/sink-record.js';

/** Observes how long `work` took into `histogram`, labelled by its outcome. */
async function timed<T>(histogram: Histogram<'outcome'>, started: bigint, work: Promise<T>): Promise<T> {
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  try {
    const value = await work;
    histogram.observe({ outcome: 'ok' }, seconds());
    return value;
  } catch (error) {
    histogram.observe({ outcome: 'error' }, seconds());
    throw error;
  }
}

/**
 * The Kafka requests the relay makes (batches, their sizes, send and commit
 * time), observed by a sink decorator: instrument(sink) wraps each session's
 * sink.
 */
export function kafkaRequestMetrics(registry: Registry): (sink: Sink) => Sink {
  const batches = new Counter({ name: 'outbox_tail_batches_total', help: 'Kafka produce requests acknowledged (one sendBatch each)', registers: [registry] });
  const batchRecords = new Histogram({
    name: 'outbox_tail_batch_records',
    help: 'Records per acknowledged Kafka request',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers: [registry],
  });
  const batchBytes = new Histogram({
    name: 'outbox_tail_batch_bytes',
    help: 'Approximate bytes per acknowledged Kafka request',
    buckets: [1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
    registers: [registry],
  });
  const sendSeconds = new Histogram({
    name: 'outbox_tail_kafka_send_duration_seconds',
    help: 'Duration of Kafka produce requests, by outcome (ok, error)',
    labelNames: ['outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const commitSeconds = new Histogram({
    name: 'outbox_tail_kafka_commit_duration_seconds',
    help: 'Exactly-once: watermark produce plus EndTxn of a Kafka transaction, by outcome (ok, error)',
    labelNames: ['outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  let commitSeriesExported = false;
  const observeBatch = (records: readonly SinkRecord[]) => {
    if (records.length === 0) return;
    let bytes = 0;
    for (const r of records) bytes += r.bytes;
    batches.inc();
    batchRecords.observe(records.length);
    batchBytes.observe(bytes);
  };
  return (sink) => {
    // Exactly-once: commit() measures the watermark produce (with the last batch, if any) + EndTxn. The Kafka
    // transaction's last batch, sent with the watermark, counts as a batch like the others (its time is the commit's).
    // Both outcomes exported from the first exactly-once session on, at 0: a failure series that appeared only with its
    // first failure would hide that failure from increase() and rate() (no earlier sample), and so from the alert on it.
    if (isTransactional(sink) && !commitSeriesExported) {
      commitSeconds.zero({ outcome: 'ok' });
      commitSeconds.zero({ outcome: 'error' });
      commitSeriesExported = true;
    }
    return decorateSink(sink, {
      async send(records, next) {
        await timed(sendSeconds, process.hrtime.bigint(), next());
        observeBatch(records);
      },
      async commit(records, _position, next) {
        await timed(commitSeconds, process.hrtime.bigint(), next());
        observeBatch(records);
      },
      // The same figure when sealing: from the watermark produce until EndTxn settled.
      async seal(records, _position, next) {
        const sealing = next();
        // A rejected seal or EndTxn is the caller's to handle; here it is only timed.
        timed(
          commitSeconds,
          process.hrtime.bigint(),
          sealing.then(({ committed }) => committed),
        ).catch(() => undefined);
        const sealed = await sealing;
        observeBatch(records);
        return sealed;
      },
    });
  };
}
