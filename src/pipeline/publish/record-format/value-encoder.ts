import { EXIT, OutboxTailError } from '../../../shared/outbox-tail-error.js';
import type { OutboxEvent } from '../../outbox-event.js';
import { Lsn } from '../../../shared/lsn.js';
import { RegistryClient, type SchemaRegistrySettings } from '../../../schema-registry/registry-client.js';
import type { SchemaCodec, SchemaType } from '../../../schema-registry/schema-codec.js';
import { frame } from '../../../schema-registry/wire-format.js';
import type { SinkRecord } from '../../../sink/sink-record.js';

export type ValueFormat = 'json' | 'avro' | 'json-schema';

export interface ValueEncoderSettings {
  valueFormat: Exclude<ValueFormat, 'json'>;
  /** {topic}, {aggregate_type}, {event_type}, {table}; default {topic}-value (Confluent's TopicNameStrategy). */
  subjectTemplate: string;
  /** How long a subject's latest schema is used before it is looked up again. */
  refreshMs: number;
  registry: SchemaRegistrySettings;
}

/** The --value-format and --schema-registry-* options as the config has them. */
export interface ValueFormatSettings {
  valueFormat: ValueFormat;
  schemaRegistryUrl?: string | undefined;
  schemaRegistrySubject: string;
  schemaRegistryRefreshMs: number;
  schemaRegistryUsername?: string | undefined;
  schemaRegistryPassword?: string | undefined;
}

/** The encoder --value-format asks for, or null for json (the payload byte for byte). */
export function createValueEncoder(s: Partial<ValueFormatSettings>): ValueEncoder | null {
  if (s.valueFormat === undefined || s.valueFormat === 'json' || s.schemaRegistryUrl === undefined) return null;
  return new ValueEncoder({
    valueFormat: s.valueFormat,
    subjectTemplate: s.schemaRegistrySubject ?? '{topic}-value',
    refreshMs: s.schemaRegistryRefreshMs ?? 300_000,
    registry: { url: s.schemaRegistryUrl, username: s.schemaRegistryUsername, password: s.schemaRegistryPassword },
  });
}

export type ValueResult = { ok: true; value: Buffer } | { ok: false; reason: string; subject: string; schemaId: number };

interface Latest {
  readonly id: number;
  readonly codec: SchemaCodec;
  readonly fetchedAt: number;
}

/** A payload that did not fit its schema gets the latest schema looked up again first, at most this often per subject. */
const REFRESH_ON_MISMATCH_MS = 5_000;

/**
 * --value-format avro|json-schema: replaces a record's JSON value by the
 * payload encoded with its subject's latest schema, in the Confluent wire
 * format. Synchronous while the subject's schema is cached and fresh
 * (tryEncode); encode() looks it up in the registry first. A payload that
 * does not fit is a result, not an error: the publishing stage applies
 * --on-malformed to it. A registry it cannot reach is a retriable error.
 */
export class ValueEncoder {
  private readonly latest = new Map<string, Latest>();
  /** Compiled schemas by id: a refresh that finds the same id compiles nothing. */
  private readonly codecs = new Map<number, SchemaCodec>();
  private readonly expected: SchemaType;
  private readonly subjectOf: (record: SinkRecord, event: OutboxEvent) => string;

  constructor(
    private readonly settings: ValueEncoderSettings,
    private readonly client: Pick<RegistryClient, 'latest'> = new RegistryClient(settings.registry),
    private readonly now: () => number = Date.now,
  ) {
    this.expected = settings.valueFormat === 'avro' ? 'AVRO' : 'JSON';
    this.subjectOf = compileSubjectTemplate(settings.subjectTemplate);
  }

  /** The encoded value, or undefined when the registry must be asked first (not cached, stale, or a mismatch worth a refresh). */
  tryEncode(record: SinkRecord, event: OutboxEvent): ValueResult | undefined {
    const subject = this.subjectOf(record, event);
    const latest = this.latest.get(subject);
    const now = this.now();
    if (latest === undefined || now - latest.fetchedAt >= this.settings.refreshMs) return undefined;
    const result = latest.codec.encode(record.value);
    if (result.ok) return { ok: true, value: frame(latest.id, result.body) };
    // The writer may already use a newer schema than the one cached: look again before calling the payload bad.
    if (now - latest.fetchedAt >= REFRESH_ON_MISMATCH_MS) return undefined;
    return { ok: false, reason: result.reason, subject, schemaId: latest.id };
  }

  /** Looks the subject's latest schema up, then encodes. Rejects with a retriable error while the registry is unreachable. */
  async encode(record: SinkRecord, event: OutboxEvent): Promise<ValueResult> {
    const subject = this.subjectOf(record, event);
    const found = await this.client.latest(subject);
    if (found.type !== this.expected) {
      throw new OutboxTailError(
        'SCHEMA_NOT_FOUND',
        `subject "${subject}" holds a ${found.type} schema (id ${found.id}), but --value-format is ${this.settings.valueFormat}`,
        { hint: `register a ${this.expected} schema under "${subject}", or set --value-format to match the subject`, exitCode: EXIT.CONFIG },
      );
    }
    let codec = this.codecs.get(found.id);
    if (codec === undefined) {
      // avsc and ajv (2.2 MB of heap, and their parse at start-up) are loaded only by --value-format avro|json-schema.
      const { compileSchema } = await import('../../../schema-registry/schema-codec.js');
      try {
        codec = compileSchema(found.type, found.schema);
      } catch (error) {
        throw new OutboxTailError('SCHEMA_NOT_FOUND', `schema id ${found.id} of subject "${subject}" does not compile: ${(error as Error).message}`, {
          hint: 'register a valid schema version under the subject',
          cause: error,
          exitCode: EXIT.CONFIG,
        });
      }
      this.codecs.set(found.id, codec);
    }
    this.latest.set(subject, { id: found.id, codec, fetchedAt: this.now() });
    const result = codec.encode(record.value);
    return result.ok ? { ok: true, value: frame(found.id, result.body) } : { ok: false, reason: result.reason, subject, schemaId: found.id };
  }
}

/** The halt of --on-malformed fail on a payload its schema refuses. */
export function schemaMismatchError(event: OutboxEvent, result: Extract<ValueResult, { ok: false }>): OutboxTailError {
  return new OutboxTailError(
    'MALFORMED_ROW',
    `outbox event id=${event.id} does not fit schema id ${result.schemaId} of subject "${result.subject}": ${result.reason} (commit LSN ${Lsn.format(event.txn.commitLsn)}); the slot is not confirmed past it`,
    {
      hint: 'fix the writer or register a schema version it fits, or run with --on-malformed=dead-letter --dead-letter-topic=<topic>',
      exitCode: EXIT.BAD_INPUT,
    },
  );
}

const PLACEHOLDER = /(\{topic\}|\{aggregate_type\}|\{event_type\}|\{table\})/;

/** `{topic}-value` and friends; memoised per distinct value tuple, like the topic template. */
function compileSubjectTemplate(template: string): (record: SinkRecord, event: OutboxEvent) => string {
  const parts = template.split(PLACEHOLDER);
  if (parts.length === 1) return () => template;
  if (parts.length === 3 && parts[1] === '{topic}') {
    const [before, , after] = parts as [string, string, string];
    const cache = new Map<string, string>();
    return (record) => {
      let subject = cache.get(record.topic);
      if (subject === undefined) {
        subject = `${before}${record.topic}${after}`;
        if (cache.size >= 1024) cache.clear();
        cache.set(record.topic, subject);
      }
      return subject;
    };
  }
  return (record, event) => {
    let out = '';
    for (const part of parts) {
      if (part === '{topic}') out += record.topic;
      else if (part === '{aggregate_type}') out += event.aggregateType;
      else if (part === '{event_type}') out += event.eventType;
      else if (part === '{table}') out += event.table;
      else out += part;
    }
    return out;
  };
}
