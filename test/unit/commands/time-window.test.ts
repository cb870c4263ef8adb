import { describe, expect, it } from 'vitest';
import { OutboxTailError } from '../../../src/shared/outbox-tail-error.js';
import { parseDuration, parseTime, parseTimeWindow } from '../../../src/commands/time-window.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');

function failure(fn: () => unknown): OutboxTailError {
  try {
    fn();
  } catch (error) {
    if (OutboxTailError.is(error)) return error;
    throw error;
  }
  throw new Error('expected an OutboxTailError');
}

describe('time windows of verify, replay and recover', () => {
  it.each([
    ['2026-12-01T11:00:00Z', '2026-12-01T11:00:00.000Z'],
    ['2026-12-01 11:00:00Z', '2026-12-01T11:00:00.000Z'],
    ['2026-12-01T12:30:00+01:00', '2026-12-01T11:30:00.000Z'],
    ['2026-12-01T12:30+0100', '2026-12-01T11:30:00.000Z'],
    ['2026-12-01T11:00:00.250z', '2026-12-01T11:00:00.250Z'],
    ['90m', '2026-12-01T10:30:00.000Z'],
    ['2h', '2026-12-01T10:00:00.000Z'],
    ['1.5d', '2026-11-30T00:00:00.000Z'],
    ['30s', '2026-12-01T11:59:30.000Z'],
  ])('reads %s as %s', (value, iso) => {
    expect(new Date(parseTime('from', value, NOW)).toISOString()).toBe(iso);
  });

  it.each(['2026-12-01 12:00:00', '2026-12-01', 'yesterday', '2h ago', ''])('refuses %j, naming the flag and examples', (value) => {
    const e = failure(() => parseTime('from', value, NOW));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(`--from ${JSON.stringify(value)}: expected a time with a zone or a span back from now`);
    expect(e.hint).toContain('--from 2h');
  });

  it('refuses an LSN, naming the header to take the time from', () => {
    const e = failure(() => parseTime('from', '16/B374D848', NOW));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toContain('an outbox row carries no LSN');
    expect(e.hint).toContain('commit_lsn header is 16/B374D848');
    expect(e.exitCode).toBe(2);
  });

  it('defaults --to to now and refuses an empty or inverted window', () => {
    expect(parseTimeWindow('1h', undefined, NOW)).toEqual({ fromMs: NOW - 3_600_000, toMs: NOW });
    expect(parseTimeWindow('2h', '1h', NOW)).toEqual({ fromMs: NOW - 7_200_000, toMs: NOW - 3_600_000 });
    expect(failure(() => parseTimeWindow('1h', '2h', NOW)).message).toContain('is not before --to');
    expect(failure(() => parseTimeWindow('1h', '1h', NOW)).exitCode).toBe(2);
  });

  it('reads retention durations and refuses what is not one', () => {
    expect(parseDuration('older-than', '7d')).toBe(604_800_000);
    expect(parseDuration('older-than', ' 12h ')).toBe(43_200_000);
    expect(parseDuration('older-than', '0s')).toBe(0);
    expect(parseDuration('older-than', '1.25h')).toBe(4_500_000);
    const e = failure(() => parseDuration('older-than', '7 days'));
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toContain('--older-than "7 days": expected a duration');
    expect(e.hint).toContain('--older-than 7d');
  });

  it('trims what it reads, and anchors every form at both ends', () => {
    expect(parseTime('from', ' 2h ', NOW)).toBe(NOW - 7_200_000);
    expect(new Date(parseTime('from', ' 2026-12-01T11:00:00Z ', NOW)).toISOString()).toBe('2026-12-01T11:00:00.000Z');
    expect(failure(() => parseTime('from', ' 16/B374D848 ', NOW)).message).toContain('carries no LSN');
    for (const value of ['x2h', '2hx', '2.h', 'x2026-12-01T11:00:00Z', '2026-12-01T11:00:00Zx', 'x16/B374D848', '16/B374D848x']) {
      expect(failure(() => parseTime('from', value, NOW)).message, value).toContain('expected a time with a zone');
    }
  });

  it('names --to when --to is bad, and says what an inverted window needs', () => {
    expect(failure(() => parseTimeWindow('2h', 'soon', NOW)).message).toContain('--to "soon"');
    expect(failure(() => parseTimeWindow('bad', '1h', NOW)).message).toContain('--from "bad"');
    const inverted = failure(() => parseTimeWindow('1h', '2h', NOW));
    expect(inverted.code).toBe('CONFIG_INVALID');
    expect(inverted.hint).toContain('give a --to after --from');
  });
});
