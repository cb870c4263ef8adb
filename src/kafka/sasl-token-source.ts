import { OutboxTailError } from '../shared/outbox-tail-error.js';

/** SASL/OAUTHBEARER with OIDC client credentials (RFC 6749 4.4): what the token endpoint is asked with. */
export interface OidcClientCredentials {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  scope?: string | undefined;
  /** SASL extensions sent with the token (KIP-342), e.g. Confluent Cloud's logicalCluster and identityPoolId. */
  extensions?: Record<string, string> | undefined;
}

export interface SaslToken {
  value: string;
  /** Epoch ms when the token expires. */
  expiresAt: number;
  extensions?: Record<string, string>;
}

export type SaslTokenSource = () => Promise<SaslToken>;

/**
 * A token is fetched again once 80% of its lifetime has passed (Kafka's Java
 * client's sasl.login.refresh.window.factor), and never handed out with less
 * than MIN_REMAINING_MS left: the broker ends a session when its token
 * expires, and kafkajs re-authenticates 10 s before a session ends, so a
 * cached token near its end made every re-authentication short, and the next
 * one came within a second, which the broker refuses (ILLEGAL_SASL_STATE, seen
 * against Kafka 4.1 with 30 s tokens).
 */
const REFRESH_AT_FRACTION = 0.8;
const MIN_REMAINING_MS = 30_000;
/** A token endpoint that sends no expires_in: fetched again after this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;

/**
 * Caches a token and fetches a new one when it is due; concurrent callers (a
 * client's connections to several brokers) share one fetch.
 */
export function cachedTokenSource(fetchToken: () => Promise<SaslToken>, now: () => number = Date.now): SaslTokenSource {
  let current: { token: SaslToken; refreshAt: number } | null = null;
  let pending: Promise<SaslToken> | null = null;
  return async () => {
    if (current && now() < current.refreshAt) return current.token;
    pending ??= (async () => {
      try {
        const fetchedAt = now();
        const token = await fetchToken();
        const lifetime = Math.max(0, token.expiresAt - fetchedAt);
        current = { token, refreshAt: fetchedAt + Math.min(lifetime * REFRESH_AT_FRACTION, lifetime - MIN_REMAINING_MS) };
        return token;
      } finally {
        pending = null;
      }
    })();
    return pending;
  };
}

/** OIDC client credentials: POSTs to the token endpoint with HTTP Basic client authentication (RFC 6749 2.3.1). */
export function oidcTokenSource(oidc: OidcClientCredentials, timeoutMs: number): SaslTokenSource {
  return cachedTokenSource(async () => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', ...(oidc.scope ? { scope: oidc.scope } : {}) });
    const basic = Buffer.from(`${encodeURIComponent(oidc.clientId)}:${encodeURIComponent(oidc.clientSecret)}`).toString('base64');
    const where = `the OAuth token endpoint ${safeUrl(oidc.tokenEndpoint)}`;
    let response: Response;
    try {
      response = await fetch(oidc.tokenEndpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const cause = fetchFailure(error);
      throw new OutboxTailError('KAFKA_AUTH_UNAVAILABLE', `${where} is unreachable (${cause})`, {
        retriable: true,
        hint: 'check --sasl-oauth-token-endpoint and that the identity provider is up; the relay retries',
        cause: error,
      });
    }
    const text = await response.text();
    let json: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      /* named below */
    }
    if (!response.ok || typeof json.access_token !== 'string') {
      const reason =
        typeof json.error === 'string' ? `${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}` : text.slice(0, 200);
      // 400/401 with invalid_client or invalid_scope never heals by itself; a 5xx or 429 does.
      const retriable = response.status >= 500 || response.status === 429;
      throw new OutboxTailError('KAFKA_AUTH_FAILED', `${where} refused a token (HTTP ${response.status}): ${reason}`, {
        retriable,
        hint: retriable
          ? 'the identity provider failed; the relay retries'
          : 'check --sasl-oauth-client-id, --sasl-oauth-client-secret-file and --sasl-oauth-scope against the client registered at the identity provider',
      });
    }
    const lifetimeMs = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in * 1000 : DEFAULT_LIFETIME_MS;
    return { value: json.access_token, expiresAt: Date.now() + lifetimeMs, ...(oidc.extensions ? { extensions: oidc.extensions } : {}) };
  });
}

/**
 * AWS MSK IAM: an OAUTHBEARER token that is a presigned kafka-cluster:Connect
 * URL, from AWS's own signer (aws-msk-iam-sasl-signer-js) with the default
 * credential chain; the package is loaded only when the mechanism is chosen.
 */
export function mskIamTokenSource(region: string | undefined): SaslTokenSource {
  return cachedTokenSource(async () => {
    const resolved = region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
    if (!resolved)
      throw new OutboxTailError('CONFIG_INVALID', '--sasl-mechanism aws-msk-iam needs a region', {
        hint: "set --aws-region (or AWS_REGION) to the cluster's region",
      });
    const signer = await import('aws-msk-iam-sasl-signer-js');
    try {
      const { token, expiryTime } = await signer.generateAuthToken({ region: resolved });
      return { value: token, expiresAt: expiryTime };
    } catch (error) {
      throw new OutboxTailError('KAFKA_AUTH_UNAVAILABLE', `--sasl-mechanism aws-msk-iam: no token for ${resolved}: ${(error as Error).message}`, {
        retriable: true,
        hint: 'the relay needs AWS credentials (the default chain: env, profile, web identity, instance role) allowed kafka-cluster:Connect on the cluster',
        cause: error,
      });
    }
  });
}

/** Why fetch() failed, as short as an operator needs it (ECONNREFUSED, ENOTFOUND, a timeout). */
function fetchFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
  if ((error as Error).name === 'TimeoutError') return 'timed out';
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
}

/** The endpoint without credentials or query, for messages. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}
