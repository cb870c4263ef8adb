import kafkajs, { CompressionTypes } from 'kafkajs';
import { codecOf, type Compression } from '../compression-codecs.js';

const KAFKAJS_TYPE: Record<Exclude<Compression, 'none' | 'gzip'>, CompressionTypes.Snappy | CompressionTypes.LZ4 | CompressionTypes.ZSTD> = {
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

/**
 * kafkajs reads and writes only gzip by itself (snappy, LZ4 and zstd throw
 * "not implemented"): every kafkajs client of outbox-tail (the sinks, the
 * idempotent consumer, verify, replay) gets the codecs of compression-codecs.ts,
 * so a consumer reads whatever codec a topic holds. A codec this Node.js lacks
 * (zstd before 22.15) throws when a batch needs it, naming the fix.
 */
export function installKafkajsCodecs(): void {
  for (const [name, type] of Object.entries(KAFKAJS_TYPE) as Array<[keyof typeof KAFKAJS_TYPE, (typeof KAFKAJS_TYPE)[keyof typeof KAFKAJS_TYPE]]>) {
    // kafkajs's exports are spread from a computed object, which Node's CommonJS export detection does not see.
    kafkajs.CompressionCodecs[type] = () => ({
      compress: (encoder: { buffer: Buffer }) => codecOf(name).compress(encoder.buffer),
      decompress: (buffer: Buffer) => codecOf(name).decompress(buffer),
    });
  }
}

/** kafkajs's compression type of --compression. */
export function kafkajsCompression(compression: Compression | undefined): CompressionTypes {
  switch (compression ?? 'none') {
    case 'gzip':
      return CompressionTypes.GZIP;
    case 'snappy':
      return CompressionTypes.Snappy;
    case 'lz4':
      return CompressionTypes.LZ4;
    case 'zstd':
      return CompressionTypes.ZSTD;
    default:
      return CompressionTypes.None;
  }
}
