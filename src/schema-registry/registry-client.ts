import { setTimeout as delay } from 'node:timers/promises';
import { OutboxTailError } from '../shared/outbox-tail-error.js';
import { redactUrl } from '../shared/redact-secrets.js';
import { backoffDelay } from '../shared/backoff.js';
import type { SchemaType } from './schema-codec.js';

export interface SchemaRegistrySettings {
  /** Base URL of a Confluent-compatible API (Confluent, Karapace, Apicurio's /apis/ccompat/v7, Redpanda). */
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** Per request. */
  timeoutMs?: number;
  /** Attempts per lookup before the typed retriable error is thrown (the relay then restarts with its own backoff). */
  attempts?: number;
}

export interface RegisteredSchema {
  id: number;
  type: SchemaType;
  schema: string;
}

/**
 * The few calls of the Confluent Schema Registry REST API the relay and the
 * consumer use: a subject's latest version, a schema by id, and register (for
 * tests and tools). Written on fetch rather than on
 * @kafkajs/confluent-schema-registry, so every failure is one of our typed
 * errors (retriable or not) naming the URL and the fix.
 */
export class RegistryClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly settings: SchemaRegistrySettings) {
    this.base = settings.url.replace(/\/+$/, '');
    this.headers = { accept: 'application/vnd.schemaregistry.v1+json, application/json' };
    if (settings.username !== undefined) {
      this.headers.authorization = `Basic ${Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')}`;
    }
  }

  async latest(subject: string): Promise<RegisteredSchema> {
    const body = await this.request('GET', `/subjects/${encodeURIComponent(subject)}/versions/latest`, undefined, `subject "${subject}"`);
    return toRegistered(body, `subject "${subject}"`);
  }

  async byId(id: number): Promise<RegisteredSchema> {
    const body = await this.request('GET', `/schemas/ids/${id}`, undefined, `schema id ${id}`);
    return toRegistered({ ...(body as object), id }, `schema id ${id}`);
  }

  /** Registers a schema under a subject (or finds it registered) and returns its id. */
  async register(subject: string, type: SchemaType, schema: string): Promise<number> {
    const body = await this.request(
      'POST',
      `/subjects/${encodeURIComponent(subject)}/versions`,
      JSON.stringify({ schema, ...(type === 'AVRO' ? {} : { schemaType: type }) }),
      `subject "${subject}"`,
    );
    return (body as { id: number }).id;
  }

  private async request(method: string, path: string, body: string | undefined, what: string): Promise<unknown> {
    const attempts = this.settings.attempts ?? 3;
    let last: OutboxTailError | null = null;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await delay(backoffDelay(attempt - 1, 200, 2_000));
      try {
        return await this.once(method, path, body, what);
      } catch (error) {
        if (!OutboxTailError.is(error) || error.code !== 'SCHEMA_REGISTRY_UNREACHABLE') throw error;
        last = error;
      }
    }
    throw last!;
  }

  private async once(method: string, path: string, body: string | undefined, what: string): Promise<unknown> {
    const url = `${this.base}${path}`;
    const shown = redactUrl(this.base);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/vnd.schemaregistry.v1+json' },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 10_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new OutboxTailError('SCHEMA_REGISTRY_UNREACHABLE', `schema registry ${shown} is unreachable looking up ${what} (${cause})`, {
        retriable: true,
        hint: 'start the registry or fix --schema-registry-url; the relay retries with backoff and confirms nothing past the events it could not encode',
        cause: error,
      });
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as unknown;
    const detail = `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    if (response.status === 401 || response.status === 403) {
      throw new OutboxTailError('SCHEMA_REGISTRY_AUTH_FAILED', `schema registry ${shown} refused our credentials looking up ${what} (${detail})`, {
        hint: 'set --schema-registry-username and --schema-registry-password-file (or OUTBOX_TAIL_SCHEMA_REGISTRY_PASSWORD) to a user that may read the subject',
      });
    }
    if (response.status === 404) {
      // Retriable: a subject registered after the relay started (deploy order) is picked up on the next attempt.
      throw new OutboxTailError('SCHEMA_NOT_FOUND', `schema registry ${shown} has no ${what} (${detail})`, {
        retriable: true,
        hint: 'register the schema under that subject, or fix --schema-registry-subject; the relay retries and confirms nothing past it',
      });
    }
    throw new OutboxTailError('SCHEMA_REGISTRY_UNREACHABLE', `schema registry ${shown} failed looking up ${what} (${detail})`, {
      retriable: true,
      hint: 'check the registry (its logs, its storage); the relay retries with backoff and confirms nothing past the events it could not encode',
    });
  }
}

function toRegistered(body: unknown, what: string): RegisteredSchema {
  const b = body as { id?: unknown; schema?: unknown; schemaType?: unknown };
  const type = b.schemaType === undefined || b.schemaType === 'AVRO' ? 'AVRO' : b.schemaType === 'JSON' ? 'JSON' : null;
  if (typeof b.id !== 'number' || typeof b.schema !== 'string' || type === null) {
    throw new OutboxTailError(
      'SCHEMA_NOT_FOUND',
      `the schema registry's answer for ${what} is not an Avro or JSON schema (schemaType ${String(b.schemaType)})`,
      {
        hint: 'register an AVRO or JSON schema under the subject (PROTOBUF is not supported)',
      },
    );
  }
  return { id: b.id, type, schema: b.schema };
}
