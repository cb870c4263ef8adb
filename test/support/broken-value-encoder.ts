import type { DaemonExtras } from '../../src/commands/run/run-daemon.js';
import { ValueEncoder } from '../../src/pipeline/publish/record-format/value-encoder.js';

/**
 * --value-format negative control: a relay whose encoder, when the schema
 * registry cannot be reached, publishes the payload's JSON as it is instead
 * of failing the session (what "skip the encoding on error" would do). The
 * registry-down test must see it publish while the registry is down.
 */
export const VALUE_ENCODER_VARIANTS: Record<string, DaemonExtras> = { 'encode-json-when-registry-down': {} };

export function installValueEncoderVariant(variant: string): void {
  if (!(variant in VALUE_ENCODER_VARIANTS)) return;
  const encode = ValueEncoder.prototype.encode;
  ValueEncoder.prototype.encode = async function (this: ValueEncoder, ...args: Parameters<ValueEncoder['encode']>) {
    try {
      return await encode.apply(this, args);
    } catch {
      return { ok: true, value: args[0].value };
    }
  };
}
