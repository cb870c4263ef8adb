/**
 * Node errno codes of a connection to PostgreSQL that broke or could not be
 * made: the server or the network, never the request. Both the relay's error
 * classification and the consumer's transient-error test treat them as
 * "retry on a new connection".
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
