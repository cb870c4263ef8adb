/**
 * Whether a PostgreSQL connection string starts with postgres:// or
 * postgresql://. Anything else is refused: without its scheme pg reads
 * `user:password@host/db` as host "user" and a path (connecting to the wrong
 * host and quoting the password as a host name), and a keyword/value string
 * (`host=... password=...`) is not parsed as libpq would.
 */
export function hasPostgresScheme(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value.trim());
}
