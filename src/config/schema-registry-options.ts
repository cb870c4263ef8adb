import { z } from 'zod';
import { hasUserinfo } from '../shared/has-userinfo.js';
import { MAX_TIMER_MS } from '../shared/max-timer-ms.js';

/**
 * The --value-format and --schema-registry-* options (docs/schema-registry.md),
 * spread into the one config schema; kept here so the schema file stays small.
 */
export const schemaRegistryOptions = {
  valueFormat: z.enum(['json', 'avro', 'json-schema']).default('json').meta({
    group: 'Records and topics',
    description:
      "Record value: json (the payload byte for byte), or avro / json-schema (the payload encoded with its subject's latest schema in --schema-registry-url, Confluent wire format)",
  }),
  schemaRegistryUrl: z
    .url({ protocol: /^https?$/ })
    // fetch refuses URLs with credentials, and a URL is printed in logs and errors.
    .refine(
      (url) => !hasUserinfo(url),
      'must not carry a user or password: give --schema-registry-username and --schema-registry-password-file (or OUTBOX_TAIL_SCHEMA_REGISTRY_PASSWORD)',
    )
    .optional()
    .meta({
      group: 'Records and topics',
      description: 'Confluent-compatible schema registry base URL (required by --value-format avro|json-schema)',
    }),
  schemaRegistrySubject: z
    .string()
    .trim()
    .min(1)
    .refine(
      (t) => !/\{(?!topic\}|aggregate_type\}|event_type\}|table\})[^}]*\}/.test(t),
      'unknown placeholder; use {topic}, {aggregate_type}, {event_type} or {table}',
    )
    .default('{topic}-value')
    .meta({ group: 'Records and topics', description: "Subject template of each record's schema: {topic}, {aggregate_type}, {event_type}, {table}" }),
  schemaRegistryUsername: z.string().trim().min(1).optional().meta({ group: 'Records and topics', description: 'Schema registry basic-auth user' }),
  schemaRegistryPassword: z.string().min(1).optional().meta({
    group: 'Records and topics',
    description: 'Schema registry basic-auth password (prefer --schema-registry-password-file or the env var: argv is visible in ps)',
    secret: true,
  }),
  schemaRegistryPasswordFile: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta({ group: 'Records and topics', description: 'Read the schema registry password from this file' }),
  schemaRegistryRefreshMs: z.coerce
    .number()
    .int()
    .min(1000)
    .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest Node timer)`)
    .default(300_000)
    .meta({
      group: 'Records and topics',
      description: "How long a subject's latest schema is used before it is looked up again (also looked up again when a payload does not fit it)",
    }),
};

/** Cross-field rules of these options, called from the schema's superRefine. */
export function checkSchemaRegistryOptions(
  c: {
    valueFormat: string;
    schemaRegistryUrl?: string | undefined;
    schemaRegistryPassword?: string | undefined;
    schemaRegistryPasswordFile?: string | undefined;
  },
  addIssue: (path: string, message: string) => void,
): void {
  if (c.valueFormat !== 'json' && c.schemaRegistryUrl === undefined) addIssue('schemaRegistryUrl', `required with valueFormat ${c.valueFormat}`);
  if (c.schemaRegistryPassword !== undefined && c.schemaRegistryPasswordFile !== undefined) {
    addIssue('schemaRegistryPasswordFile', 'give either schemaRegistryPassword or schemaRegistryPasswordFile, not both');
  }
}
