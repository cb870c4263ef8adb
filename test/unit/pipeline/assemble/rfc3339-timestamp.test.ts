import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIMESTAMP_OID, TIMESTAMPTZ_OID, toRfc3339 } from '../../../../src/pipeline/assemble/rfc3339-timestamp.js';
import { tempDir } from '../../../support/temp-dir.js';

describe('toRfc3339', () => {
  it.each([
    ['2026-12-01 12:27:21.69642+00', '2026-12-01T12:27:21.696420Z'],
    ['2026-12-01 12:27:21+00', '2026-12-01T12:27:21.000000Z'],
    ['2026-12-01 12:27:21.000001+00', '2026-12-01T12:27:21.000001Z'],
    ['2026-12-01 01:00:00.5+05:30', '2026-11-30T19:30:00.500000Z'],
    ['2026-12-31 23:30:00-01', '2027-01-01T00:30:00.000000Z'],
    ['1883-11-18 12:00:00-00:19:32', '1883-11-18T12:19:32.000000Z'],
    ['0050-06-01 00:00:00+00', '0050-06-01T00:00:00.000000Z'],
    ['2024-02-29 23:59:59.999999+00', '2024-02-29T23:59:59.999999Z'],
  ])('converts the timestamptz %s to %s', (input, expected) => {
    expect(toRfc3339(input, TIMESTAMPTZ_OID)).toBe(expected);
  });

  it('converts up to the ends of RFC 3339 years and leaves what falls outside them unchanged', () => {
    expect(toRfc3339('0001-01-01 00:00:00+00', TIMESTAMPTZ_OID)).toBe('0001-01-01T00:00:00.000000Z');
    expect(toRfc3339('0001-01-01 00:30:00+01', TIMESTAMPTZ_OID)).toBe('0001-01-01 00:30:00+01');
    expect(toRfc3339('9999-12-31 22:00:00-01', TIMESTAMPTZ_OID)).toBe('9999-12-31T23:00:00.000000Z');
    expect(toRfc3339('9999-12-31 23:30:00-01', TIMESTAMPTZ_OID)).toBe('9999-12-31 23:30:00-01');
    expect(toRfc3339(' 2026-12-01 12:27:21+00', TIMESTAMPTZ_OID)).toBe(' 2026-12-01 12:27:21+00');
    expect(toRfc3339('2026-12-01 12:27:21+00 ', TIMESTAMPTZ_OID)).toBe('2026-12-01 12:27:21+00 ');
  });

  it('reads a timestamp without time zone as UTC', () => {
    expect(toRfc3339('2026-12-01 12:27:21.69642', TIMESTAMP_OID)).toBe('2026-12-01T12:27:21.696420Z');
  });

  it.each(['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '12/01/2026 12:27:21.69642 UTC', '2026-12-01 12:27:21.69642'])(
    'leaves %s unchanged when it has no RFC 3339 form or is not an ISO timestamptz',
    (input) => {
      expect(toRfc3339(input, TIMESTAMPTZ_OID)).toBe(input);
    },
  );

  it('leaves other column types unchanged', () => {
    expect(toRfc3339('2026-12-01 12:27:21.69642+00', 25)).toBe('2026-12-01 12:27:21.69642+00');
  });

  it("produces what java.time's strict Instant.parse and OffsetDateTime.parse accept, at the same instant", () => {
    const inputs = ['2026-12-01 12:27:21.69642+00', '2026-12-01 01:00:00.5+05:30', '1883-11-18 12:00:00-00:19:32', '0050-06-01 00:00:00+00'];
    const outputs = inputs.map((i) => toRfc3339(i, TIMESTAMPTZ_OID));
    const dir = tempDir('rfc3339-');
    const source = join(dir, 'Check.java');
    writeFileSync(
      source,
      `public class Check { public static void main(String[] a) { for (String s : a) {
         System.out.println(java.time.Instant.parse(s).toEpochMilli() + " " + java.time.OffsetDateTime.parse(s).toInstant().getNano()); } } }`,
    );
    const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
    const lines = execFileSync(java, [source, ...outputs], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(lines).toHaveLength(inputs.length);
    // Java's reading of each string is the instant we meant: the same milliseconds, and every microsecond in the nanoseconds.
    expect(lines.map((l) => l.split(' ').map(Number))).toEqual(outputs.map((o) => [Date.parse(o), Number(o.slice(20, 26)) * 1000]));
  });
});

describe('toRfc3339 on UTC text, the form every relay session reads', () => {
  /** PostgreSQL's ISO output of an instant in UTC: fraction without trailing zeros, none when zero; `+00` for timestamptz. */
  const pgText = (ms: number, micros: number, offset: string) => {
    const iso = new Date(ms).toISOString();
    const frac = String(micros).padStart(6, '0').replace(/0+$/, '');
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''}${offset}`;
  };
  const rfc3339 = (ms: number, micros: number) => `${new Date(ms).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;

  it('gives the instant Date gives, to the microsecond, for 20,000 random instants from year 1 to 9999', () => {
    // Date.UTC reads the years 0-99 as 1900-1999.
    const first = new Date(0).setUTCFullYear(1, 0, 1);
    const last = Date.UTC(9999, 11, 31, 23, 59, 59);
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor((first + random() * (last - first)) / 1000) * 1000;
      // Every fifth without a fraction, as PostgreSQL prints whole seconds.
      const micros = i % 5 === 0 ? 0 : Math.floor(random() * 1_000_000);
      expect(toRfc3339(pgText(ms, micros, '+00'), TIMESTAMPTZ_OID)).toBe(rfc3339(ms, micros));
      expect(toRfc3339(pgText(ms, micros, ''), TIMESTAMP_OID)).toBe(rfc3339(ms, micros));
    }
  });

  it('still converts a +00:30 or -00 offset through the instant, and leaves year 0 unchanged', () => {
    expect(toRfc3339('2026-12-01 12:27:21+00:30', TIMESTAMPTZ_OID)).toBe('2026-12-01T11:57:21.000000Z');
    expect(toRfc3339('2026-12-01 12:27:21-00', TIMESTAMPTZ_OID)).toBe('2026-12-01T12:27:21.000000Z');
    expect(toRfc3339('0000-06-01 00:00:00+00', TIMESTAMPTZ_OID)).toBe('0000-06-01 00:00:00+00');
  });
});
