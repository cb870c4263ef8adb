import type { Options } from 'yargs';
import type { CommandSpec } from '../../src/cli/command-options.js';
import { envName, flagName, keysByGroup, type OptionKey, type OptionSpec } from '../../src/config/options.js';
import { cell, code, fillTemplate, generatedNotice, table } from './markdown.js';

export interface ConfigurationPageInput {
  /** The hand-written page with {{options}}, {{deprecated}} and {{commands}} where the generated parts go. */
  template: string;
  /** Files the page is generated from, named in its first line. */
  sources: readonly string[];
  /** optionSpecs(schema): every option as the schema describes it. */
  options: Readonly<Record<string, OptionSpec>>;
  deprecated: Readonly<Record<string, { replacement: string; spec: OptionSpec }>>;
  configFileOption: { flag: string; env: string; options: Options };
  commands: Readonly<Record<string, CommandSpec>>;
}

const MS_UNITS: Array<[number, string]> = [
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];
const BYTE_UNITS: Array<[number, string]> = [
  [1024 * 1024, 'MiB'],
  [1024, 'KiB'],
];

/** 3600000 ms reads better as "1 h" next to it; only whole multiples are shown. */
function readable(value: number, units: Array<[number, string]>): string {
  const unit = units.find(([size]) => value >= size && value % size === 0);
  return unit ? ` (${value / unit[0]} ${unit[1]})` : '';
}

/** The unit an option's name promises (every duration is in ms, every size in bytes). */
function unitOf(key: string): { name: string; multiples: Array<[number, string]> } | null {
  if (/Ms$/.test(key)) return { name: 'ms', multiples: MS_UNITS };
  if (/Bytes$/.test(key)) return { name: 'bytes', multiples: BYTE_UNITS };
  return null;
}

function typeCell(key: string, spec: OptionSpec): string {
  const unit = unitOf(key);
  switch (spec.type) {
    case 'boolean':
      return 'boolean';
    case 'array':
      return spec.choices ? `comma-separated list of ${spec.choices.map(code).join(', ')}` : 'comma-separated list';
    case 'number': {
      const kind = `${spec.integer ? 'integer' : 'number'}${unit ? ` (${unit.name})` : ''}`;
      if (spec.min !== undefined && spec.max !== undefined) return `${kind}, ${spec.min} to ${spec.max}`;
      if (spec.min !== undefined) return `${kind}, at least ${spec.min}`;
      return `${kind}`;
    }
    case 'string':
      return spec.choices ? `one of ${spec.choices.map(code).join(', ')}` : 'string';
  }
}

function defaultCell(key: string, value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return code(value.join(','));
  const unit = unitOf(key);
  return `${code(String(value))}${typeof value === 'number' && unit ? readable(value, unit.multiples) : ''}`;
}

function optionsSection(options: ConfigurationPageInput['options']): string {
  return keysByGroup(options)
    .map(([group, keys]) => {
      const rows = keys.map((key) => {
        const spec = options[key]!;
        const envs = [envName(key as OptionKey), ...(spec.aliasesEnv ?? [])].map(code).join(', ');
        return [code(`--${flagName(key as OptionKey)}`), envs, code(key), typeCell(key, spec), defaultCell(key, spec.default), cell(spec.describe)];
      });
      return `### ${group}\n\n${table(['Flag', 'Environment variable', 'File key', 'Type', 'Default', 'Description'], rows)}`;
    })
    .join('\n\n');
}

function deprecatedSection(deprecated: ConfigurationPageInput['deprecated']): string {
  const rows = Object.entries(deprecated)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, { replacement, spec }]) => [
      code(`--${flagName(key as OptionKey)}`),
      code(envName(key as OptionKey)),
      code(key),
      code(`--${flagName(replacement as OptionKey)}`),
      cell(spec.describe),
    ]);
  return table(['Flag', 'Environment variable', 'File key', 'Replaced by', 'Description'], rows);
}

function commandOptionType(options: Options): string {
  return typeof options.type === 'string' ? options.type : 'string';
}

function commandsSection(commands: ConfigurationPageInput['commands'], configFileOption: ConfigurationPageInput['configFileOption']): string {
  const configFile = table(
    ['Flag', 'Environment variable', 'Type', 'Description'],
    [[code(`--${configFileOption.flag}`), code(configFileOption.env), commandOptionType(configFileOption.options), cell(String(configFileOption.options.describe))]],
  );
  const perCommand = Object.values(commands).map((command) => {
    const [name, ...aliases] = command.names;
    const isDefault = aliases.includes('$0');
    const heading = `### \`outbox-tail ${name}\`${isDefault ? ' (the default command)' : ''}`;
    const entries = Object.entries(command.options);
    const own =
      entries.length === 0
        ? 'No options besides the ones above.'
        : table(
            ['Flag', 'Type', 'Default', 'Description'],
            entries.map(([flag, o]) => [
              `${code(`--${flag}`)}${o.demandOption ? ' (required)' : ''}`,
              commandOptionType(o),
              o.default === undefined ? '' : code(String(o.default)),
              `${cell(String(o.describe ?? ''))}${o.deprecated ? ` (deprecated: ${cell(String(o.deprecated))})` : ''}`,
            ]),
          );
    const sentence = `${command.describe[0]!.toUpperCase()}${command.describe.slice(1)}.`;
    return `${heading}\n\n${cell(sentence)}\n\n${own}`;
  });
  return [
    `Every command takes every option above, and a config file:\n\n${configFile}`,
    ...perCommand,
  ].join('\n\n');
}

/** docs/configuration.md: the template with the option, deprecated-name and command tables filled in. Pure: same input, same bytes. */
export function renderConfigurationPage(input: ConfigurationPageInput): string {
  const body = fillTemplate('configuration template', input.template, {
    options: optionsSection(input.options),
    deprecated: deprecatedSection(input.deprecated),
    commands: commandsSection(input.commands, input.configFileOption),
  });
  return `${generatedNotice(input.sources)}\n\n${body.trimEnd()}\n`;
}
