import { EXIT, OutboxTailError } from '../shared/outbox-tail-error.js';

/** A half-open window of creation times, [from, to), in milliseconds since the epoch. */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const SPAN = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;

/** A duration such as `90m`, `12h` or `7d`, in milliseconds. */
export function parseDuration(flag: string, value: string): number {
  const span = SPAN.exec(value.trim());
  if (!span) {
    throw new OutboxTailError('CONFIG_INVALID', `invalid configuration:\n  --${flag} ${JSON.stringify(value)}: expected a duration`, {
      hint: `e.g. --${flag} 7d, --${flag} 12h or --${flag} 90m`,
      exitCode: EXIT.CONFIG,
    });
  }
  return Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS];
}

/** ISO 8601 with a zone (`2026-12-01T12:00:00Z`, `2026-12-01 12:00+01:00`), or a span back from now (`90m`, `2h`, `7d`). */
export function parseTime(flag: string, value: string, nowMs = Date.now()): number {
  if (/^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/.test(value.trim())) {
    throw new OutboxTailError(
      'CONFIG_INVALID',
      `invalid configuration:\n  --${flag} ${value}: rows are found by their creation time; an outbox row carries no LSN`,
      {
        hint: `give a time instead: the Kafka record whose commit_lsn header is ${value} has it in its created_at header`,
        exitCode: EXIT.CONFIG,
      },
    );
  }
  if (SPAN.test(value.trim())) return nowMs - parseDuration(flag, value);
  // A time without a zone would be read in the local zone of whoever runs the command: refuse the guess.
  const zoned = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i.test(value.trim());
  const ms = zoned ? Date.parse(value.trim().replace(' ', 'T')) : NaN;
  if (Number.isNaN(ms)) {
    throw new OutboxTailError(
      'CONFIG_INVALID',
      `invalid configuration:\n  --${flag} ${JSON.stringify(value)}: expected a time with a zone or a span back from now`,
      {
        hint: `e.g. --${flag} 2026-12-01T12:00:00Z, --${flag} 2026-12-01T13:00:00+01:00 or --${flag} 2h`,
        exitCode: EXIT.CONFIG,
      },
    );
  }
  return ms;
}

/** --from and --to (default now) as a window; an empty or inverted window is refused. */
export function parseTimeWindow(from: string, to: string | undefined, nowMs = Date.now()): TimeWindow {
  const fromMs = parseTime('from', from, nowMs);
  const toMs = to === undefined ? nowMs : parseTime('to', to, nowMs);
  if (toMs <= fromMs) {
    throw new OutboxTailError(
      'CONFIG_INVALID',
      `invalid configuration:\n  --from ${new Date(fromMs).toISOString()} is not before --to ${new Date(toMs).toISOString()}`,
      { hint: 'the window is [--from, --to): give a --to after --from', exitCode: EXIT.CONFIG },
    );
  }
  return { fromMs, toMs };
}
