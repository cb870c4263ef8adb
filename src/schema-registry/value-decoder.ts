import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { RegistryClient, type SchemaRegistrySettings } from './registry-client.js';
import type { SchemaCodec } from './schema-codec.js';
import { unframe } from './wire-format.js';

/**
 * The consumer's side of --value-format avro|json-schema: values in the
 * Confluent wire format are decoded with the schema their id names, fetched
 * from the registry once per id (ids are immutable, so the cache never goes
 * stale). prepare() fetches what a chunk needs; decode() is then synchronous.
 */
export class ValueDecoder {
  private readonly codecs = new Map<number, SchemaCodec>();
  /** Ids the registry does not know, or whose schema does not compile: their records are poison. */
  private readonly unusable = new Map<number, string>();

  constructor(
    settings: SchemaRegistrySettings,
    private readonly client: Pick<RegistryClient, 'byId'> = new RegistryClient(settings),
  ) {}

  /** Fetches the schemas of framed values not seen yet. Rejects (retriable) while the registry is unreachable. */
  async prepare(values: ReadonlyArray<Buffer | null | undefined>): Promise<void> {
    for (const value of values) {
      const framed = value ? unframe(value) : null;
      if (framed === null || this.codecs.has(framed.schemaId) || this.unusable.has(framed.schemaId)) continue;
      const id = framed.schemaId;
      try {
        const found = await this.client.byId(id);
        // Loaded on first use, like the encoder's: a consumer without a registry does without avsc and ajv.
        const { compileSchema } = await import('./schema-codec.js');
        this.codecs.set(id, compileSchema(found.type, found.schema));
      } catch (error) {
        if (OutboxTailError.is(error) && error.retriable && error.code !== 'SCHEMA_NOT_FOUND') throw error;
        this.unusable.set(id, (error as Error).message);
      }
    }
  }

  /** The decoded payload; throws (the record is poison) for a value that is not framed or names an unusable schema. */
  decode(value: Buffer): unknown {
    const framed = unframe(value);
    if (framed === null) throw new Error('the value is not in the Confluent wire format (magic byte 0, then a 4-byte schema id)');
    const codec = this.codecs.get(framed.schemaId);
    if (codec === undefined) throw new Error(`schema id ${framed.schemaId} cannot be used: ${this.unusable.get(framed.schemaId) ?? 'not fetched'}`);
    return codec.decode(framed.body);
  }
}
