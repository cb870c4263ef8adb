/**
 * Zombie fencing (issue 13, rule E6): relay A in exactly-once mode is paused
 * with SIGSTOP inside a Kafka transaction it still means to commit, longer
 * than wal_sender_timeout; the server drops its walsender, standby B (same
 * slot, same transactional id) takes over, fences A's producer and publishes
 * from the slot, including what A had sent but not committed. Then A is woken
 * (SIGCONT) and commits. Kafka must refuse that commit: a read_committed
 * consumer sees every row once, nothing interleaved, and no watermark of A
 * after B's first.
 *
 * A is the `slow-commit` variant (test/support/broken-exactly-once.ts): the
 * real relay whose commits wait 1.5 s after the records were sent, so the
 * pause lands inside the window every run. B is the real relay. The negative
 * control, `slow-commit-unfenced`, is the same A with a transactional id of its
 * own (id-pid): nothing fences it, and its woken commit must be caught as
 * duplicates.
 */
import { isStreaming } from '../support/relay-process.js';
import type { FaultStack } from './fault-stack.js';
import { FaultCollector } from './collector.js';
import { FaultRun, sleep, uniqueRecords } from './harness.js';
import { lsnDrops } from './scenarios.js';

export interface ZombieResult {
  variant: 'slow-commit' | 'slow-commit-unfenced';
  committed: number;
  read_committed_records: number;
  duplicates: number;
  lost: number;
  phantoms: number;
  aborted_read_uncommitted: number;
  lsn_drops: number;
  /** What the woken zombie's commit did: `ok` or `failed <code>` (from A's stderr). */
  zombie_commit: string;
  /** A's watermarks in the offsets topic (read_committed) after B's first one. */
  zombie_watermarks_after_takeover: number;
  walsender_released: boolean;
  b_took_over: boolean;
  /** A's events after SIGCONT (restart codes, standby). */
  zombie_after_wake: string[];
  seconds: number;
}

const WAL_SENDER_TIMEOUT = '2s';

export async function zombieFencing(options: {
  fs: FaultStack;
  log: (line: string) => void;
  variant: 'slow-commit' | 'slow-commit-unfenced';
}): Promise<ZombieResult> {
  const { fs } = options;
  const started = Date.now();
  const run = await FaultRun.create({ fs, log: options.log, name: `zombie-${options.variant}`, partitions: 1, delivery: 'exactly-once' });
  await fs.setPostgres({ wal_sender_timeout: WAL_SENDER_TIMEOUT });
  try {
    const a = run.startRelay({}, options.variant);
    await a.waitForLog(isStreaming, 60_000);
    const b = run.startRelay();
    await b.waitForLog((l) => l.event === 'standby', 30_000);
    run.startWriter({ ratePerSecond: 40 });
    await sleep(3_000);
    await run.waitDelivered(await run.committedIds(), 60_000, 'warm-up ids');

    // Pause A right after it entered a commit window: records sent into an open Kafka transaction, commit pending.
    const windows = () => (a.stderr().match(/zombie-window /g) ?? []).length;
    const seen = windows();
    const deadline = Date.now() + 30_000;
    while (windows() === seen && Date.now() < deadline) await sleep(5);
    const { activePid } = await run.monitor.sample();
    process.kill(a.pid, 'SIGSTOP');
    const stopped = Date.now();
    const commitsBefore = (a.stderr().match(/zombie-commit /g) ?? []).length;
    run.log(`A (${a.pid}) stopped inside a commit window (walsender ${activePid})`);

    let released = false;
    while (Date.now() - stopped < 20_000) {
      const s = await run.monitor.sample().catch(() => null);
      if (s && s.activePid !== activePid) {
        released = true;
        break;
      }
      await sleep(200);
    }
    const tookOver = await b.waitForLog(isStreaming, 30_000).then(
      () => true,
      () => false,
    );
    // B publishes for a while; with fencing, A's open transaction was aborted when B initialised its producer.
    await sleep(4_000);
    process.kill(a.pid, 'SIGCONT');
    run.log(`A woken; B took over: ${tookOver}`);
    const commitDeadline = Date.now() + 30_000;
    while ((a.stderr().match(/zombie-commit /g) ?? []).length === commitsBefore && Date.now() < commitDeadline) await sleep(50);
    const zombieCommit =
      a
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('zombie-commit '))
        [commitsBefore]?.slice('zombie-commit '.length) ?? 'none';
    await sleep(3_000);

    await run.writer!.stop();
    const ids = await run.committedIds();
    await run.waitDelivered(ids, 60_000).catch((e: Error) => run.log(e.message));
    await sleep(1_500);
    const c = await run.count();
    const view = run.readUncommittedView()!;

    // The offsets topic, read_committed: which relay wrote each watermark, in offset order.
    const offsets = await readWatermarks(fs.brokers, run.offsetsTopic!);
    const aId = `:${a.pid}`;
    const bId = `:${b.pid}`;
    const firstB = offsets.findIndex((w) => w.endsWith(bId));
    const zombieAfter = firstB < 0 ? 0 : offsets.slice(firstB).filter((w) => w.endsWith(aId)).length;
    const events = a.logs
      .filter((l) => l.event === 'restart' || l.event === 'standby' || l.event === 'fatal' || l.event === 'streaming')
      .map((l) => `${l.event}${l.code ? ` ${l.code}` : ''}`);
    const result: ZombieResult = {
      variant: options.variant,
      committed: c.committed,
      read_committed_records: c.kafka_records,
      duplicates: c.duplicates,
      lost: c.lost,
      phantoms: c.phantoms,
      aborted_read_uncommitted: view.aborted,
      lsn_drops: lsnDrops(uniqueRecords(run.collector.records), run.topic),
      zombie_commit: zombieCommit,
      zombie_watermarks_after_takeover: zombieAfter,
      walsender_released: released,
      b_took_over: tookOver,
      zombie_after_wake: events.slice(events.indexOf('streaming') + 1),
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
    };
    options.log(`[zombie ${options.variant}] ${JSON.stringify(result)}`);
    return result;
  } finally {
    await fs.setPostgres({ wal_sender_timeout: null });
    await fs.repair();
    await run.close();
  }
}

/** relayId of every watermark in the (one-partition) offsets topic, read_committed, in offset order. */
async function readWatermarks(brokers: string[], topic: string): Promise<string[]> {
  const collector = await new FaultCollector(brokers).start([topic]);
  try {
    await sleep(3_000);
    return uniqueRecords(collector.records)
      .sort((x, y) => Number(BigInt(x.offset) - BigInt(y.offset)))
      .map((r) => (r.value ? ((JSON.parse(r.value.toString()) as { relayId?: string }).relayId ?? '') : ''));
  } finally {
    await collector.stop();
  }
}
