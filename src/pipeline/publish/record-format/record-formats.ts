/**
 * The record layouts --record-format chooses between (docs/cloudevents.md).
 * Their own module, like record-headers.ts: the config schema validates the
 * option without importing the record builders.
 */
export const RECORD_FORMATS = ['default', 'cloudevents-binary', 'cloudevents-structured'] as const;
export type RecordFormat = (typeof RECORD_FORMATS)[number];

/** --cloudevents-source when not given: the table ("schema.table"), or the message prefix for --source messages. */
export const DEFAULT_CLOUDEVENTS_SOURCE = '/outbox-tail/{table}';
