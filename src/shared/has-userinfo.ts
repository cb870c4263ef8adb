/**
 * Whether a URL carries a user or password before its host. HTTP endpoints
 * (the schema registry, the OAuth token endpoint) are fetched with `fetch`,
 * which refuses such URLs, and a URL is printed in logs and errors: so they
 * are refused at start, pointing to the options that carry the credentials.
 */
export function hasUserinfo(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url.trim());
}
