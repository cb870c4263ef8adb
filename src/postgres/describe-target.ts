/** host:port/db without credentials, for messages. */
export function describeTarget(config: { databaseUrl?: string | undefined }): string {
  if (!config.databaseUrl) return 'the PG* environment (no --database-url given)';
  try {
    const u = new URL(config.databaseUrl);
    return `${u.hostname || 'localhost'}:${u.port || 5432}${u.pathname}`;
  } catch {
    return '(unparseable --database-url)';
  }
}
