/** Milliseconds between 1970-01-01 and 2000-01-01: PostgreSQL's epoch. */
const PG_EPOCH_MS = 946_684_800_000;

/**
 * The replication protocol's timestamps (commit times, status updates) are
 * microseconds since 2000-01-01; these convert them from and to Unix time in
 * milliseconds, the one place that knows the offset.
 */
export const PgTimestamp = {
  toUnixMs(micros: bigint): number {
    return Number(micros / 1000n) + PG_EPOCH_MS;
  },
  fromUnixMs(unixMs: number): bigint {
    return (BigInt(Math.floor(unixMs)) - BigInt(PG_EPOCH_MS)) * 1000n;
  },
} as const;
