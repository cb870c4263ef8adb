import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Checkpointer } from '../../../../src/pipeline/checkpoint/checkpointer.js';
import { OutboxTailError } from '../../../../src/shared/outbox-tail-error.js';
import type { OutboxEvent, PipelineItem, Transaction } from '../../../../src/pipeline/outbox-event.js';
import { alreadyPublished } from '../../../../src/pipeline/publish/skip-published.js';
import { badRowPolicies } from '../../../../src/pipeline/publish/bad-row-policy.js';
import { AtLeastOncePublisher } from '../../../../src/pipeline/publish/at-least-once-publisher.js';
import { ExactlyOncePublisher, type ExactlyOnceOptions } from '../../../../src/pipeline/publish/exactly-once-publisher.js';
import type { PublishCounters, PublishingStageOptions } from '../../../../src/pipeline/publish/publish-queue.js';
import { Lsn } from '../../../../src/shared/lsn.js';
import { RecordBuilder } from '../../../../src/pipeline/publish/record-format/record-builder.js';
import type { SinkRecord } from '../../../../src/sink/sink-record.js';

let seq = 0;
const txn = (): Transaction => ({ seq: ++seq, xid: seq, commitLsn: Lsn.of(BigInt(seq * 100)), commitTime: 0n, endLsn: null });
const event = (t: Transaction, id: string, payload = '{}'): PipelineItem => ({
  kind: 'event',
  event: {
    id,
    aggregateType: 'order',
    aggregateId: `k-${id}`,
    eventType: 'E',
    payload: Buffer.from(payload),
    headers: {},
    createdAt: null,
    table: 'public.outbox',
    txn: t,
  } satisfies OutboxEvent,
});
const malformed = (t: Transaction, id: string): PipelineItem => ({
  kind: 'malformed',
  row: { id, reason: 'column(s) payload NULL', table: 'public.outbox', txn: t },
});

/** A stage over a checkpointer, a recording sink and a fake flow control. */
function bed(
  options: {
    config?: Partial<Parameters<typeof badRowPolicies>[0]>;
    limits?: Partial<PublishingStageOptions['limits']>;
    refuse?: (records: readonly SinkRecord[]) => Error | null;
    /** --delivery exactly-once with a recording transactional sink. */
    exactlyOnce?: boolean;
    /** Exactly-once: each seal's EndTxn stays pending until the test settles it through `endTxns`. */
    holdEndTxn?: boolean;
  } = {},
) {
  const checkpointer = new Checkpointer();
  const sent: string[][] = [];
  const flow = {
    paused: 0,
    resumed: 0,
    isPaused: false,
    pause() {
      this.paused++;
      this.isPaused = true;
    },
    resume() {
      this.resumed++;
      this.isPaused = false;
    },
  };
  const counters: PublishCounters & { published: string[] } = {
    eventsReceived: 0,
    recordsPublished: 0,
    deadLettered: 0,
    batches: 0,
    kafkaTransactions: 0,
    kafkaTransactionsPgTransactions: 0,
    published: [],
    onPublished: (topic) => counters.published.push(topic),
  };
  let confirms = 0;
  /** Exactly-once: each commit's watermark LSN and how many batches had been sent when it committed. */
  const commits: Array<{ lsn: bigint; afterBatches: number }> = [];
  /** holdEndTxn: the pending EndTxns, in seal order. */
  const endTxns: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const record = async (records: readonly SinkRecord[]) => {
    const refused = options.refuse?.(records);
    if (refused) throw refused;
    sent.push(records.map((r) => r.headers.id ?? r.key));
  };
  const exactlyOnce: ExactlyOnceOptions = {
    sink: {
      send: record,
      commit: async (position, records) => {
        if (records?.length) await record(records);
        commits.push({ lsn: position.lsn, afterBatches: sent.length });
      },
      seal: async (position, records) => {
        if (records?.length) await record(records);
        commits.push({ lsn: position.lsn, afterBatches: sent.length });
        if (!options.holdEndTxn) return { committed: Promise.resolve() };
        return { committed: new Promise<void>((resolve, reject) => endTxns.push({ resolve, reject })) };
      },
      abort: async () => undefined,
    },
    skipRule: alreadyPublished,
    frontier: checkpointer,
  };
  const common: PublishingStageOptions = {
    sink: {
      send: async (records) => {
        const refused = options.refuse?.(records);
        if (refused) throw refused;
        sent.push(records.map((r) => r.headers.id ?? r.key));
      },
    },
    builder: new RecordBuilder('outbox.event.{aggregate_type}'),
    limits: { batchMaxMessages: 100, batchMaxBytes: 1_000_000, batchMaxWaitMs: 0, maxInFlightMessages: 1000, maxInFlightBytes: 1 << 24, ...options.limits },
    policies: badRowPolicies({ onOversize: 'fail', onMalformed: 'fail', ...options.config }),
    flow,
    acks: checkpointer,
    confirm: async () => void confirms++,
    counters,
    logger: pino({ level: 'silent' }),
  };
  const stage = options.exactlyOnce ? new ExactlyOncePublisher(common, exactlyOnce) : new AtLeastOncePublisher(common);
  const push = (t: Transaction, ...items: PipelineItem[]) => {
    checkpointer.begin(t);
    for (const i of items) stage.enqueue(i);
    t.endLsn = Lsn.of(t.commitLsn + 10n);
    checkpointer.committed(t);
  };
  return { stage, checkpointer, sent, flow, counters, push, commits, endTxns, confirms: () => confirms };
}

const tooLarge = () => new OutboxTailError('MESSAGE_TOO_LARGE', 'too large');

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('ExactlyOncePublisher: Kafka transactions of whole PostgreSQL transactions', () => {
  it('in a backlog (a full batch queued) one Kafka transaction takes several batches and commits once', async () => {
    const b = bed({ exactlyOnce: true, limits: { batchMaxMessages: 2 } });
    const ts = Array.from({ length: 6 }, () => txn());
    for (const [i, t] of ts.entries()) b.push(t, event(t, `e${i}`));
    const running = b.stage.run();
    await tick();
    b.stage.drain();
    await running;
    expect(b.sent).toEqual([
      ['e0', 'e1'],
      ['e2', 'e3'],
      ['e4', 'e5'],
    ]);
    expect(b.commits).toEqual([{ lsn: ts[5]!.endLsn, afterBatches: 3 }]);
    expect(b.counters).toMatchObject({ kafkaTransactions: 1, kafkaTransactionsPgTransactions: 6, recordsPublished: 6 });
    expect(b.checkpointer.safeLsn).toBe(ts[5]!.endLsn);
  });

  it('commits each small batch at once (a steady rate: nothing waits for later records)', async () => {
    const b = bed({ exactlyOnce: true, limits: { batchMaxMessages: 10 } });
    const ts = Array.from({ length: 3 }, () => txn());
    const running = b.stage.run();
    for (const [i, t] of ts.entries()) {
      b.push(t, event(t, `e${i}`));
      await tick();
    }
    b.stage.drain();
    await running;
    expect(b.commits).toEqual([
      { lsn: ts[0]!.endLsn, afterBatches: 1 },
      { lsn: ts[1]!.endLsn, afterBatches: 2 },
      { lsn: ts[2]!.endLsn, afterBatches: 3 },
    ]);
    expect(b.counters).toMatchObject({ kafkaTransactions: 3, kafkaTransactionsPgTransactions: 3 });
  });

  it('after a batch of at least half the limits keeps the Kafka transaction open for what is queued (a catch-up)', async () => {
    const b = bed({ exactlyOnce: true, limits: { batchMaxMessages: 2 } });
    const ts = Array.from({ length: 3 }, () => txn());
    for (const [i, t] of ts.entries()) b.push(t, event(t, `e${i}`));
    const running = b.stage.run();
    await tick();
    b.stage.drain();
    await running;
    expect(b.commits).toEqual([{ lsn: ts[2]!.endLsn, afterBatches: 2 }]);
    expect(b.counters).toMatchObject({ kafkaTransactions: 1, kafkaTransactionsPgTransactions: 3 });
  });

  it('commits what comes before a malformed row before halting on it, even in a backlog', async () => {
    const b = bed({ exactlyOnce: true, limits: { batchMaxMessages: 2 } });
    const [t1, t2, t3] = [txn(), txn(), txn()];
    b.push(t1, event(t1, 'a'));
    b.push(t2, event(t2, 'b'));
    b.push(t3, malformed(t3, 'bad'), event(t3, 'after'));
    await expect(b.stage.run()).rejects.toMatchObject({ code: 'MALFORMED_ROW' });
    expect(b.sent).toEqual([['a', 'b']]);
    expect(b.commits).toEqual([{ lsn: t2.endLsn, afterBatches: 1 }]);
    expect(b.confirms()).toBe(1);
    expect(b.checkpointer.safeLsn).toBe(t2.endLsn);
  });
});

describe('ExactlyOncePublisher: a record Kafka refuses as too large', () => {
  it('halts with MESSAGE_TOO_LARGE naming the fix: a record inside a Kafka transaction cannot be dead-lettered, and nothing of it counts', async () => {
    const b = bed({ exactlyOnce: true, config: { onOversize: 'dead-letter', deadLetterTopic: 'dlq' }, refuse: () => tooLarge() });
    const t = txn();
    b.push(t, event(t, 'huge'));
    b.stage.drain();
    const error = await b.stage.run().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'MESSAGE_TOO_LARGE' });
    expect((error as OutboxTailError).describe()).toContain('exactly-once delivery cannot dead-letter a record inside a Kafka transaction');
    expect((error as OutboxTailError).cause).toMatchObject({ code: 'MESSAGE_TOO_LARGE' });
    expect(b.commits).toEqual([]);
    expect(b.counters).toMatchObject({ kafkaTransactions: 0, recordsPublished: 0, deadLettered: 0 });
  });
});

describe('ExactlyOncePublisher: a sealed Kafka transaction counts only once its EndTxn succeeded', () => {
  it('does not acknowledge a sealed Kafka transaction before its EndTxn succeeded, and seals the next one only after it', async () => {
    const b = bed({ exactlyOnce: true, holdEndTxn: true, limits: { batchMaxMessages: 1 } });
    const [t1, t2, t3] = [txn(), txn(), txn()];
    b.push(t1, event(t1, 'a'));
    const running = b.stage.run();
    await tick();
    expect(b.commits).toEqual([{ lsn: t1.endLsn, afterBatches: 1 }]);
    // The next PostgreSQL transactions are sent into the next Kafka transaction meanwhile (batches of one, a full batch
    // queued behind: it stays open), but nothing is acknowledged.
    b.push(t2, event(t2, 'b'));
    b.push(t3, event(t3, 'c'));
    await tick();
    expect(b.sent).toEqual([['a'], ['b']]);
    expect(b.commits).toHaveLength(1);
    expect(b.checkpointer.safeLsn).toBe(0n);
    expect((b.stage as ExactlyOncePublisher).publishedLsn).toBe(0n);
    expect(b.counters).toMatchObject({ recordsPublished: 0, kafkaTransactions: 0 });
    b.endTxns[0]!.resolve();
    await tick();
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
    expect((b.stage as ExactlyOncePublisher).publishedLsn).toBe(t1.endLsn);
    expect(b.commits).toEqual([
      { lsn: t1.endLsn, afterBatches: 1 },
      { lsn: t3.endLsn, afterBatches: 3 },
    ]);
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
    b.stage.drain();
    await tick();
    b.endTxns[1]!.resolve();
    await running;
    expect(b.checkpointer.safeLsn).toBe(t3.endLsn);
    expect(b.counters).toMatchObject({ recordsPublished: 3, kafkaTransactions: 2, kafkaTransactionsPgTransactions: 3 });
  });

  it('keeps sending queued records into the open Kafka transaction while the previous EndTxn is pending, and seals it only after', async () => {
    const b = bed({ exactlyOnce: true, holdEndTxn: true, limits: { batchMaxMessages: 2 } });
    const [t1, t2, t3, t4] = [txn(), txn(), txn(), txn()];
    b.push(t1, event(t1, 'a'));
    const running = b.stage.run();
    await tick();
    b.push(t2, event(t2, 'b'));
    b.push(t3, event(t3, 'c'));
    b.push(t4, event(t4, 'd'));
    await tick();
    // Less than a full batch behind [b, c]: without the pending EndTxn it would have been sealed with them at once.
    expect(b.sent).toEqual([['a'], ['b', 'c']]);
    expect(b.commits).toHaveLength(1);
    expect(b.checkpointer.safeLsn).toBe(0n);
    b.endTxns[0]!.resolve();
    await tick();
    expect(b.commits).toEqual([
      { lsn: t1.endLsn, afterBatches: 1 },
      { lsn: t4.endLsn, afterBatches: 3 },
    ]);
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
    b.stage.drain();
    await tick();
    b.endTxns[1]!.resolve();
    await running;
    expect(b.checkpointer.safeLsn).toBe(t4.endLsn);
    expect(b.counters).toMatchObject({ recordsPublished: 4, kafkaTransactions: 2 });
  });

  it('fails on a failed EndTxn without acknowledging that Kafka transaction or sealing the next one', async () => {
    const b = bed({ exactlyOnce: true, holdEndTxn: true, limits: { batchMaxMessages: 1 } });
    const [t1, t2, t3] = [txn(), txn(), txn()];
    b.push(t1, event(t1, 'a'));
    const running = b.stage.run();
    await tick();
    b.push(t2, event(t2, 'b'));
    b.push(t3, event(t3, 'c'));
    await tick();
    b.endTxns[0]!.reject(new OutboxTailError('KAFKA_PRODUCER_FENCED', 'EndTxn refused', { retriable: true }));
    await expect(running).rejects.toMatchObject({ code: 'KAFKA_PRODUCER_FENCED' });
    expect(b.commits).toEqual([{ lsn: t1.endLsn, afterBatches: 1 }]);
    expect(b.checkpointer.safeLsn).toBe(0n);
    expect((b.stage as ExactlyOncePublisher).publishedLsn).toBe(0n);
    expect(b.counters).toMatchObject({ recordsPublished: 0, kafkaTransactions: 0 });
  });

  it('fails on an EndTxn that fails while the outbox is idle', async () => {
    const b = bed({ exactlyOnce: true, holdEndTxn: true });
    const t1 = txn();
    b.push(t1, event(t1, 'a'));
    const running = b.stage.run();
    await tick();
    b.endTxns[0]!.reject(new OutboxTailError('KAFKA_ERROR', 'EndTxn timed out', { retriable: true }));
    await expect(running).rejects.toMatchObject({ code: 'KAFKA_ERROR' });
    expect(b.checkpointer.safeLsn).toBe(0n);
  });

  it('waits for the sealed Kafka transaction to commit before it confirms and halts on a malformed row', async () => {
    const b = bed({ exactlyOnce: true, holdEndTxn: true });
    const [t1, t2] = [txn(), txn()];
    b.push(t1, event(t1, 'a'));
    const running = b.stage.run();
    await tick();
    b.push(t2, malformed(t2, 'bad'));
    await tick();
    expect(b.confirms()).toBe(0);
    b.endTxns[0]!.resolve();
    await expect(running).rejects.toMatchObject({ code: 'MALFORMED_ROW' });
    expect(b.confirms()).toBe(1);
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
  });
});

describe('the publishing stage (at-least-once unless said)', () => {
  it('publishes queued items in order, in batches, and moves the frontier only as Kafka acknowledges', async () => {
    const b = bed({ limits: { batchMaxMessages: 2 } });
    const [t1, t2] = [txn(), txn()];
    b.push(t1, event(t1, 'a'), event(t1, 'b'), event(t1, 'c'));
    b.push(t2, event(t2, 'd'));
    expect(b.checkpointer.safeLsn).toBe(0n);
    b.stage.drain();
    await b.stage.run();
    expect(b.sent).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(b.checkpointer.safeLsn).toBe(t2.endLsn);
    expect(b.counters).toMatchObject({ eventsReceived: 4, recordsPublished: 4, batches: 2, deadLettered: 0 });
  });

  it('pauses its input at the in-flight limit and resumes under half of it', async () => {
    const b = bed({ limits: { maxInFlightMessages: 4, batchMaxMessages: 1 } });
    const t = txn();
    b.checkpointer.begin(t);
    for (const id of ['a', 'b', 'c']) b.stage.enqueue(event(t, id));
    expect(b.flow.paused).toBe(0);
    b.stage.enqueue(event(t, 'd'));
    expect(b.flow.isPaused).toBe(true);
    const running = b.stage.run();
    await new Promise((r) => setTimeout(r, 10));
    expect(b.flow.resumed).toBe(1); // at 1 in flight (< 2)
    b.stage.drain();
    await running;
  });

  it('halts on a malformed row under fail: what comes before it is published and confirmed first, nothing after it', async () => {
    const b = bed();
    const [t1, t2] = [txn(), txn()];
    b.push(t1, event(t1, 'a'));
    b.push(t2, malformed(t2, 'bad'), event(t2, 'after'));
    await expect(b.stage.run()).rejects.toMatchObject({ code: 'MALFORMED_ROW', exitCode: 5 });
    expect(b.sent).toEqual([['a']]);
    expect(b.confirms()).toBe(1);
    expect(b.checkpointer.safeLsn).toBe(t1.endLsn);
  });

  it('dead-letters a malformed row under dead-letter', async () => {
    const b = bed({ config: { onMalformed: 'dead-letter', deadLetterTopic: 'dlq' } });
    const t = txn();
    b.push(t, malformed(t, 'bad'), event(t, 'ok'));
    b.stage.drain();
    await b.stage.run();
    expect(b.sent).toEqual([['bad', 'ok']]);
    expect(b.counters).toMatchObject({ deadLettered: 1, recordsPublished: 1 });
    expect(b.counters.published).toEqual(['dlq', 'outbox.event.order']);
  });

  it('finds the record Kafka refuses alone and halts on it under fail, after confirming the rest', async () => {
    const b = bed({ refuse: (records) => (records.some((r) => r.value.length > 200) ? tooLarge() : null) });
    const t = txn();
    b.push(t, event(t, 'a'), event(t, 'huge', `"${'x'.repeat(200)}"`), event(t, 'c'));
    await expect(b.stage.run()).rejects.toMatchObject({ code: 'MESSAGE_TOO_LARGE', exitCode: 5, message: expect.stringMatching(/^outbox row id=huge/) });
    expect(b.sent).toEqual([['a']]);
    expect(b.confirms()).toBe(1);
  });

  it('replaces a record Kafka refuses alone with a dead-letter pointer under dead-letter', async () => {
    const b = bed({
      config: { onOversize: 'dead-letter', deadLetterTopic: 'dlq' },
      refuse: (records) => (records.some((r) => r.value.length > 200) ? tooLarge() : null),
    });
    const t = txn();
    b.push(t, event(t, 'a'), event(t, 'huge', `"${'x'.repeat(200)}"`), event(t, 'c'));
    b.stage.drain();
    await b.stage.run();
    expect(b.sent).toEqual([['a'], ['huge'], ['c']]);
    expect(b.counters.published).toEqual(['outbox.event.order', 'dlq', 'outbox.event.order']);
    expect(b.counters).toMatchObject({ recordsPublished: 2, deadLettered: 1 });
    expect(b.checkpointer.safeLsn).toBe(t.endLsn);
  });

  it('rejects on any other sink failure without acknowledging the batch', async () => {
    const b = bed({ refuse: () => new OutboxTailError('KAFKA_UNREACHABLE', 'down', { retriable: true }) });
    const t = txn();
    b.push(t, event(t, 'a'));
    await expect(b.stage.run()).rejects.toMatchObject({ code: 'KAFKA_UNREACHABLE' });
    expect(b.checkpointer.safeLsn).toBe(0n);
  });

  it('stops publishing when aborted', async () => {
    const b = bed();
    const running = b.stage.run();
    b.stage.abort();
    await running;
    const t = txn();
    b.push(t, event(t, 'a'));
    expect(b.sent).toEqual([]);
  });
});

describe('AtLeastOncePublisher, pipelined: several batches in flight, acknowledged in queue order', () => {
  /** A stage over a sink whose sends stay pending until the test settles them. */
  function pipelinedBed(depth: number, batchMaxMessages = 1) {
    const pending: Array<{ ids: string[]; resolve: () => void; reject: (error: Error) => void }> = [];
    const checkpointer = new Checkpointer();
    const counters: PublishCounters = {
      eventsReceived: 0,
      recordsPublished: 0,
      deadLettered: 0,
      batches: 0,
      kafkaTransactions: 0,
      kafkaTransactionsPgTransactions: 0,
      onPublished: null,
    };
    const stage = new AtLeastOncePublisher({
      sink: {
        maxInFlightRequests: depth,
        send: (records) => new Promise<void>((resolve, reject) => pending.push({ ids: records.map((r) => r.headers.id ?? r.key), resolve, reject })),
      },
      builder: new RecordBuilder('outbox.event.{aggregate_type}'),
      limits: { batchMaxMessages, batchMaxBytes: 1_000_000, batchMaxWaitMs: 0, maxInFlightMessages: 1000, maxInFlightBytes: 1 << 24 },
      policies: badRowPolicies({ onOversize: 'fail', onMalformed: 'fail' }),
      flow: { pause() {}, resume() {}, isPaused: false },
      acks: checkpointer,
      confirm: async () => undefined,
      counters,
      logger: pino({ level: 'silent' }),
    });
    const ts = Array.from({ length: 5 }, () => txn());
    for (const [i, t] of ts.entries()) {
      checkpointer.begin(t);
      stage.enqueue(event(t, `e${i}`));
      t.endLsn = Lsn.of(t.commitLsn + 10n);
      checkpointer.committed(t);
    }
    return { stage, pending, checkpointer, counters, ts };
  }

  it('keeps up to maxInFlightRequests batches outstanding, and moves the frontier only over batches acknowledged with every earlier one', async () => {
    const b = pipelinedBed(3);
    const running = b.stage.run();
    await tick();
    expect(b.pending.map((p) => p.ids)).toEqual([['e0'], ['e1'], ['e2']]);
    // Kafka answers the later two first: nothing may be confirmed while the first is unacknowledged.
    b.pending[1]!.resolve();
    b.pending[2]!.resolve();
    await tick();
    expect(b.checkpointer.safeLsn).toBe(0n);
    expect(b.counters.recordsPublished).toBe(0);
    expect(b.pending).toHaveLength(3);
    b.pending[0]!.resolve();
    await tick();
    expect(b.checkpointer.safeLsn).toBe(b.ts[2]!.endLsn);
    expect(b.pending.map((p) => p.ids)).toEqual([['e0'], ['e1'], ['e2'], ['e3'], ['e4']]);
    b.pending[3]!.resolve();
    b.pending[4]!.resolve();
    b.stage.drain();
    await running;
    expect(b.checkpointer.safeLsn).toBe(b.ts[4]!.endLsn);
    expect(b.counters).toMatchObject({ recordsPublished: 5, batches: 5 });
  });

  it('fails on a refused batch without acknowledging the batches behind it, even those Kafka acknowledged', async () => {
    const b = pipelinedBed(3);
    const running = b.stage.run();
    await tick();
    b.pending[1]!.resolve();
    b.pending[0]!.reject(new OutboxTailError('KAFKA_ERROR', 'NOT_ENOUGH_REPLICAS', { retriable: true }));
    await expect(running).rejects.toMatchObject({ code: 'KAFKA_ERROR' });
    expect(b.checkpointer.safeLsn).toBe(0n);
    expect(b.counters.recordsPublished).toBe(0);
  });

  it('with maxInFlightRequests 1 (or a sink without it) sends the next batch only after the last was acknowledged', async () => {
    const b = pipelinedBed(1);
    const running = b.stage.run();
    await tick();
    expect(b.pending).toHaveLength(1);
    b.pending[0]!.resolve();
    await tick();
    expect(b.pending).toHaveLength(2);
    b.stage.abort();
    b.pending[1]!.resolve();
    await running;
  });
});

describe('AtLeastOncePublisher, pipelined: a batch refused as too large', () => {
  it('waits for the batches behind it, publishes its records one by one under --on-oversize, then sends the rest again', async () => {
    const b = bed({
      config: { onOversize: 'dead-letter', deadLetterTopic: 'dlq' },
      limits: { batchMaxMessages: 2 },
      refuse: (records) => (records.length > 0 && records.some((r) => r.value.length > 200) && records[0]!.topic !== 'dlq' ? tooLarge() : null),
    });
    // The same recording sink, with two requests in flight.
    const sink = (b.stage as unknown as { options: { sink: { maxInFlightRequests?: number } } }).options.sink;
    sink.maxInFlightRequests = 2;
    const t = txn();
    b.push(t, event(t, 'a'), event(t, 'huge', `"${'x'.repeat(200)}"`), event(t, 'c'), event(t, 'd'));
    b.stage.drain();
    await b.stage.run();
    const flat = b.sent.flat();
    // Every record reached Kafka, the pointer instead of the huge one, and c and d again after it.
    expect(flat.lastIndexOf('c')).toBeGreaterThan(flat.indexOf('huge'));
    expect(b.counters).toMatchObject({ recordsPublished: 3, deadLettered: 1 });
    expect(b.checkpointer.safeLsn).toBe(t.endLsn);
  });
});
