import type { Lsn } from '../../shared/lsn.js';
import type { Watermark } from '../../sink/watermark.js';

/**
 * The skip rule (docs/architecture.md#exactly-once): a PostgreSQL transaction
 * whose commit end LSN is at or below the watermark is already in Kafka, in a
 * committed Kafka transaction, and must not be published again.
 *
 * It is decided from the commit LSN (Begin's final_lsn), because rows are
 * published before their Commit arrives (LSN rule 13) and the end LSN is only
 * known then. The two are the same test: commit records do not overlap and a
 * transaction's commit record starts before it ends, so for the watermark W =
 * end LSN of the last published transaction, `endLsn <= W` holds exactly when
 * `commitLsn < W` (the last one: commitLsn < endLsn = W; earlier ones end
 * before it starts; later ones start at or after W).
 */
export function alreadyPublished(commitLsn: Lsn, watermark: Pick<Watermark, 'lsn' | 'commitLsn'> | null): boolean {
  return watermark !== null && commitLsn < watermark.lsn;
}

/** The skip rule's shape, so the crash suite can run a deliberately wrong one. */
export type SkipRule = typeof alreadyPublished;
