import { CloudEventsRecordBuilder } from './cloudevents-format.js';
import { RecordBuilder } from './record-builder.js';
import type { RecordFormat } from './record-formats.js';
import type { RecordHeaderName } from './record-headers.js';

/** The options that shape a record: --topic, --record-headers, --record-format, --cloudevents-source; and the topics --topic must never render. */
export interface RecordFormatSettings {
  topic: string;
  recordHeaders: readonly RecordHeaderName[];
  recordFormat: RecordFormat;
  cloudeventsSource: string;
  offsetsTopic?: string | undefined;
  deadLetterTopic?: string | undefined;
}

/** The record builder for --record-format: the outbox-tail layout, or a CloudEvents binding. */
export function createRecordBuilder(s: RecordFormatSettings): RecordBuilder {
  const reserved = [s.offsetsTopic, s.deadLetterTopic].filter((t): t is string => t !== undefined);
  if (s.recordFormat === 'default') return new RecordBuilder(s.topic, s.recordHeaders, reserved);
  const mode = s.recordFormat === 'cloudevents-binary' ? 'binary' : 'structured';
  return new CloudEventsRecordBuilder(s.topic, s.recordHeaders, mode, s.cloudeventsSource, reserved);
}
