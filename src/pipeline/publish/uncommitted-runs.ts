import type { Transaction } from '../outbox-event.js';
import type { AckTracker, PublishCounters } from './publish-queue.js';

/** Records sent in the open Kafka transaction, acknowledged when it commits: no payloads kept, one run per transaction and topic. */
export interface UncommittedRun {
  readonly txn: Transaction;
  readonly topic: string;
  readonly deadLetter: boolean;
  count: number;
}

/** One more record in the open Kafka transaction: it joins the last run when transaction, topic and kind match. */
export function addToRuns(runs: UncommittedRun[], txn: Transaction, topic: string, deadLetter: boolean): void {
  const run = runs[runs.length - 1];
  if (run && run.txn === txn && run.topic === topic && run.deadLetter === deadLetter) run.count++;
  else runs.push({ txn, topic, deadLetter, count: 1 });
}

/** The Kafka transaction holding `runs` committed: count its records and acknowledge them to the checkpointer, in order. */
export function acknowledgeRuns(runs: readonly UncommittedRun[], counters: PublishCounters, acks: AckTracker): void {
  counters.kafkaTransactions++;
  let previous: Transaction | null = null;
  for (const run of runs) {
    if (run.txn !== previous) counters.kafkaTransactionsPgTransactions++;
    previous = run.txn;
    for (let i = 0; i < run.count; i++) counters.onPublished?.(run.topic, run.txn.commitTime, run.deadLetter);
    if (run.deadLetter) counters.deadLettered += run.count;
    else counters.recordsPublished += run.count;
    acks.acknowledged(run.txn, run.count);
  }
}
