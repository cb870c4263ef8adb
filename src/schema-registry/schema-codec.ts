import { Ajv, type ValidateFunction } from 'ajv';
import avro from 'avsc';

export type SchemaType = 'AVRO' | 'JSON';

/** Why a payload does not fit a schema; deterministic, so it goes through --on-malformed. */
export type EncodeResult = { ok: true; body: Buffer } | { ok: false; reason: string };

/** One registered schema, compiled once: encodes a jsonb payload to the body of a record, and back. */
export interface SchemaCodec {
  readonly type: SchemaType;
  encode(payload: Buffer): EncodeResult;
  decode(body: Buffer): unknown;
}

/** Compiles the registry's schema text; throws when the registry holds a schema we cannot compile. */
export function compileSchema(type: SchemaType, schema: string): SchemaCodec {
  return type === 'AVRO' ? avroCodec(schema) : jsonSchemaCodec(schema);
}

function parseJson(payload: Buffer): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(payload.toString('utf8')) };
  } catch (error) {
    return { ok: false, reason: `payload is not JSON: ${(error as Error).message}` };
  }
}

function avroCodec(schema: string): SchemaCodec {
  // wrapUnions 'auto' (avsc's default): a union of null and one type takes the plain JSON value, as the payload is plain JSON.
  const type = avro.Type.forSchema(JSON.parse(schema) as avro.Schema);
  return {
    type: 'AVRO',
    encode(payload) {
      const parsed = parseJson(payload);
      if (!parsed.ok) return parsed;
      const problems: string[] = [];
      const valid = type.isValid(parsed.value, {
        errorHook: (path, value) => {
          if (problems.length < 3) problems.push(`${path.length ? path.join('.') : '(root)'}: ${JSON.stringify(value) ?? 'undefined'} does not fit`);
        },
      });
      if (!valid) return { ok: false, reason: `payload does not fit the Avro schema ${type.name ?? type.typeName}: ${problems.join('; ')}` };
      return { ok: true, body: type.toBuffer(parsed.value) };
    },
    decode(body) {
      return type.fromBuffer(body);
    },
  };
}

function jsonSchemaCodec(schema: string): SchemaCodec {
  // strict: false: registries hold schemas written for other validators (unknown keywords, formats).
  const ajv = new Ajv({ strict: false, allErrors: false });
  const validate: ValidateFunction = ajv.compile(JSON.parse(schema) as object);
  return {
    type: 'JSON',
    encode(payload) {
      const parsed = parseJson(payload);
      if (!parsed.ok) return parsed;
      if (!validate(parsed.value)) return { ok: false, reason: `payload does not fit the JSON Schema: ${ajv.errorsText(validate.errors)}` };
      // The body of a JSON Schema record is the JSON text: the payload's own bytes.
      return { ok: true, body: payload };
    },
    decode(body) {
      return JSON.parse(body.toString('utf8'));
    },
  };
}
