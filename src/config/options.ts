import type { z } from 'zod';
import { configSchema } from './config-schema.js';
import type { RelayConfig } from './relay-config.js';
import { OPTION_GROUPS, type OptionGroup } from './option-meta.js';

export type OptionKey = keyof RelayConfig;

export interface OptionSpec {
  /** The flag's type: lists are given as comma separated strings. */
  type: 'string' | 'number' | 'boolean' | 'array';
  describe: string;
  group: OptionGroup;
  /** The values an option takes (for a list: the values of its items). */
  choices?: readonly string[];
  /** Numbers: whole numbers only, and the bounds the schema enforces. */
  integer?: boolean;
  min?: number;
  max?: number;
  /** What an empty config resolves to (undefined: no default). */
  default?: unknown;
  /** Extra env var names, lower precedence than OUTBOX_TAIL_*. */
  aliasesEnv?: readonly string[];
  secret?: boolean;
}

/** The config object schema (before its cross-field checks and transforms): one field per option. */
export type ConfigObjectSchema = z.ZodObject<Record<string, z.ZodType>>;

type Shape = Pick<OptionSpec, 'type' | 'choices' | 'integer' | 'min' | 'max'>;

/** What a user gives for a field: the input side of pipes, the validated side of preprocessing. */
function inputShape(key: string, schema: z.ZodType): Shape {
  const def = schema._zod.def as { type: string; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; element?: z.ZodType };
  switch (def.type) {
    case 'default':
    case 'optional':
      return inputShape(key, def.innerType!);
    case 'pipe': {
      // z.preprocess(fn, T) is pipe(transform, T): T says what is accepted. Otherwise pipe(input, output):
      // the input says the type, an enum output (a string narrowed to a set) says the choices.
      if (def.in!._zod.def.type === 'transform') return inputShape(key, def.out!);
      const input = inputShape(key, def.in!);
      return def.out!._zod.def.type === 'enum' ? { ...input, choices: inputShape(key, def.out!).choices } : input;
    }
    case 'enum':
      return { type: 'string', choices: (schema as z.ZodEnum).options.map(String) };
    case 'string':
      return { type: 'string' };
    case 'boolean':
      return { type: 'boolean' };
    case 'number': {
      const n = schema as z.ZodNumber;
      const bounded = (v: number | null) => (v !== null && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);
      const min = bounded(n.minValue);
      const max = bounded(n.maxValue);
      return { type: 'number', integer: n.isInt, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
    case 'array': {
      const choices = inputShape(key, def.element!).choices;
      return { type: 'array', ...(choices ? { choices } : {}) };
    }
    default:
      throw new Error(`config option ${key}: no flag type for a zod ${def.type} (options.ts, inputShape)`);
  }
}

/**
 * Every option of a config object schema with what its flag, env var, `--help`
 * and docs/configuration.md need, all read from the schema: the type and
 * choices from its zod types, the default from parsing {}, the description and
 * group from its `.meta()`. A field without a description or group is a bug.
 */
export function optionSpecs(schema: ConfigObjectSchema): Record<string, OptionSpec> {
  const defaults = schema.parse({}) as Record<string, unknown>;
  const out: Record<string, OptionSpec> = {};
  for (const [key, field] of Object.entries(schema.shape)) {
    const meta = field.meta();
    if (!meta?.description || !meta.group || !OPTION_GROUPS.includes(meta.group)) {
      throw new Error(`config option ${key} needs .meta({ group, description }) in config-schema.ts (group one of ${OPTION_GROUPS.join(', ')})`);
    }
    out[key] = {
      ...inputShape(key, field),
      describe: meta.description,
      group: meta.group,
      ...(defaults[key] !== undefined ? { default: defaults[key] } : {}),
      ...(meta.envAliases ? { aliasesEnv: meta.envAliases } : {}),
      ...(meta.secret ? { secret: true } : {}),
    };
  }
  return out;
}

/** The relay's options, from configSchema (flag: the kebab-case key; env var: OUTBOX_TAIL_ + its upper snake case). */
export const OPTIONS = optionSpecs(configSchema.in as unknown as ConfigObjectSchema) as Record<OptionKey, OptionSpec>;

export const optionKeys = Object.keys(OPTIONS) as OptionKey[];

/** The option keys by group, in OPTION_GROUPS order, each group in schema order: how `--help` and the docs list them. */
export function keysByGroup<K extends string>(specs: Record<K, OptionSpec>): Array<[OptionGroup, K[]]> {
  const keys = Object.keys(specs) as K[];
  return OPTION_GROUPS.map((group) => [group, keys.filter((key) => specs[key].group === group)] as [OptionGroup, K[]]).filter(
    ([, inGroup]) => inGroup.length > 0,
  );
}

export interface DeprecatedOption {
  /** The option that replaces it; a value given under the old name is converted into it. */
  replacement: OptionKey;
  convert(value: unknown): unknown;
  spec: OptionSpec;
}

/** Seconds (a number, or digits in a string) to milliseconds; anything else passes through for the schema to reject. */
function secondsToMs(value: unknown): unknown {
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : value;
}

/**
 * Old names that still work, converted into their replacement, with a
 * warning. Every duration is in milliseconds; --stall-timeout was in seconds.
 */
export const DEPRECATED_OPTIONS = {
  stallTimeout: {
    replacement: 'stallTimeoutMs',
    convert: secondsToMs,
    spec: { type: 'number', group: 'Observability', describe: 'Deprecated, in seconds: use --stall-timeout-ms' },
  },
} as const satisfies Record<string, DeprecatedOption>;

export type DeprecatedKey = keyof typeof DEPRECATED_OPTIONS;
export const deprecatedKeys = Object.keys(DEPRECATED_OPTIONS) as DeprecatedKey[];

export function flagName(key: OptionKey | DeprecatedKey): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function envName(key: OptionKey | DeprecatedKey): string {
  return `OUTBOX_TAIL_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
