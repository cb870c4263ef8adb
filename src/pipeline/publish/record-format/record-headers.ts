/**
 * The standard headers a record can carry (--record-headers), in the order they are written.
 * Their own module: the config schema validates --record-headers against them without
 * importing the record builder (and through it the sink).
 */
export const RECORD_HEADER_NAMES = ['id', 'event_type', 'aggregate_type', 'aggregate_id', 'created_at', 'commit_lsn'] as const;
export type RecordHeaderName = (typeof RECORD_HEADER_NAMES)[number];
