/**
 * What the Kafka loop lets record processing do for the one partition a
 * kafkajs batch belongs to. Processing never sees kafkajs itself, so the
 * order "database COMMIT, then offset commit" is decided in one place
 * (record processing) and carried out in another (the loop).
 */
export interface PartitionContext {
  topic: string;
  partition: number;
  /** Commits offset + 1 (only ever called after the record's DB transaction committed). */
  commit(offset: string): Promise<void>;
  /** Sleeps, heartbeating; returns early on stop. */
  sleep(ms: number): Promise<void>;
  halted(): boolean;
}

/**
 * 'halt': leave the rest of this partition's batch alone (stop(), a fatal
 * error, or kafkajs took the partition away). Its offsets stay uncommitted,
 * so those records come again to whoever consumes the partition next.
 */
export type Settled = 'done' | 'halt';
