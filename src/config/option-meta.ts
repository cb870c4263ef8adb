/**
 * What the config schema says about each option besides its type and default:
 * the one description (`--help` and docs/configuration.md both print it), the
 * group it is listed under, extra env var names, and whether it is a secret.
 * Each field of configSchema carries it with `.meta({ group, description })`.
 */
export const OPTION_GROUPS = [
  'Source',
  'Outbox columns',
  'PostgreSQL connection',
  'Kafka connection',
  'Records and topics',
  'Batching and flow control',
  'Delivery',
  'Bad input and lost slots',
  'Observability',
  'Runtime',
] as const;

export type OptionGroup = (typeof OPTION_GROUPS)[number];

// Zod's global metadata carries these keys on the config schema's fields (typed, so a misspelt group does not compile).
declare module 'zod' {
  interface GlobalMeta {
    group?: OptionGroup;
    envAliases?: readonly string[];
    secret?: boolean;
  }
}
