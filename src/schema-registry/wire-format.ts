/**
 * The Confluent wire format every Confluent-compatible serializer reads and
 * writes: magic byte 0, the schema id as a 4-byte big-endian integer, then the
 * encoded body (Avro binary, or JSON text for JSON Schema).
 */
const MAGIC = 0;
const HEADER_SIZE = 5;

export function frame(schemaId: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_SIZE + body.length);
  out[0] = MAGIC;
  out.writeUInt32BE(schemaId, 1);
  body.copy(out, HEADER_SIZE);
  return out;
}

/** The schema id and body of a framed value, or null when it is not in the wire format. */
export function unframe(value: Buffer): { schemaId: number; body: Buffer } | null {
  if (value.length < HEADER_SIZE || value[0] !== MAGIC) return null;
  return { schemaId: value.readUInt32BE(1), body: value.subarray(HEADER_SIZE) };
}
