/**
 * The record layouts --record-format chooses between (docs/cloudevents.md).
 * Their own module, like record-headers.ts: the config schema validates the
 * option without importing the record builders.
 */
export const RECORD_FORMATS = ['default', 'cloudevents-binary', 'cloudevents-structured'] as const;
export type RecordFormat = (typeof RECORD_FORMATS)[number];

/**
 * The formats whose value is a JSON document with the payload spliced in as
 * text (never parsed and re-serialised): a payload that is not one JSON value
 * could close the document's `data` and add or override its fields (id, type).
 */
export function embedsPayload(format: RecordFormat): boolean {
  return format === 'cloudevents-structured';
}

/** --cloudevents-source when not given: the table ("schema.table"), or the message prefix for --source messages. */
export const DEFAULT_CLOUDEVENTS_SOURCE = '/outbox-tail/{table}';
