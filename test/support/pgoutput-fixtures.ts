/**
 * The pgoutput bytes recorded from real servers (test/fixtures/*.json, made by
 * the record-pgoutput scripts there), one loader for every decoder and
 * assembler test: by scenario, each message's LSN and bytes.
 */
import { readFileSync } from 'node:fs';
import { decodePgoutput, type PgoutputMessage } from '../../src/pipeline/decode/pgoutput-decoder.js';

export type Recorded = Record<string, { lsn: string; hex: string }[]>;

type FixtureFile = 'pgoutput-recorded' | 'pgoutput-recorded-more' | 'pgoutput-recorded-messages';

/** The scenarios of these fixture files, merged (a later file's scenario wins). */
export function loadRecorded(...files: FixtureFile[]): Recorded {
  return Object.assign({}, ...files.map((file) => JSON.parse(readFileSync(new URL(`../fixtures/${file}.json`, import.meta.url), 'utf8')) as Recorded));
}

/** The bytes of message `index` of `scenario`. */
export function recordedBytes(recorded: Recorded, scenario: string, index: number): Buffer {
  const message = recorded[scenario]?.[index];
  if (!message) throw new Error(`no recorded pgoutput message ${scenario}[${index}]`);
  return Buffer.from(message.hex, 'hex');
}

/** Message `index` of `scenario`, decoded. */
export function decodeRecorded(recorded: Recorded, scenario: string, index: number): PgoutputMessage {
  return decodePgoutput(recordedBytes(recorded, scenario, index));
}

/** Every message of `scenario`, decoded, in stream order. */
export function decodeScenario(recorded: Recorded, scenario: string): PgoutputMessage[] {
  return (recorded[scenario] ?? []).map((m) => decodePgoutput(Buffer.from(m.hex, 'hex')));
}
