// The import rules of docs/architecture.md (Floor plan), checked by `npm run lint` (lint:imports):
// depcruise reads the real imports (type-only ones too), so a rule cannot drift from the code.
// The floors of src/ (docs/architecture.md, "Floor plan"), top first: a folder imports only folders on
// lower floors (and, on its own floor, the ones named beside it), never one above.
const FLOORS = [
  ['cli', 'index.ts'],
  ['commands'],
  ['relay', 'consumer', 'config'],
  ['observability'],
  ['pipeline'],
  ['sink'],
  ['kafka', 'schema-registry'],
  ['postgres'],
  ['shared'],
];
const folderPattern = (names) => `^src/(${names.map((n) => n.replace('.', '\\.')).join('|')})(/|$)`;
const FLOOR_RULES = FLOORS.slice(1).map((floor, i) => ({
  name: `floor-${floor.join('-').replace('.ts', '')}-not-up`,
  severity: 'error',
  comment: `src/{${floor.join(',')}} stands below ${FLOORS.slice(0, i + 1).flat().join(', ')}: it never imports them (move what both need down).`,
  from: { path: folderPattern(floor) },
  to: { path: folderPattern(FLOORS.slice(0, i + 1).flat()) },
}));
// Peers on one floor that must not lean on each other either.
FLOOR_RULES.push(
  {
    name: 'relay-consumer-config-apart',
    severity: 'error',
    comment: 'The daemon (relay/), the consumer library (consumer/) and the options (config/) share a floor and import none of each other.',
    from: { path: '^src/(relay|consumer|config)/' },
    to: { path: '^src/(relay|consumer|config)/', pathNot: '^src/$1/' },
  },
  {
    name: 'kafka-and-registry-apart',
    severity: 'error',
    comment: 'The Kafka client adapters and the schema registry client know nothing of each other.',
    from: { path: '^src/(kafka|schema-registry)/' },
    to: { path: '^src/(kafka|schema-registry)/', pathNot: '^src/$1/' },
  },
);
// Inside src/pipeline/: each stage is a folder that knows only the stage it reads from (a source hands on
// decoded messages; the assembler reads them) and the pipeline's own types (pipeline/*.ts). The session in
// src/relay/ wires them; no stage reaches into a later one.
const STAGES = ['source', 'decode', 'assemble', 'publish', 'checkpoint'];
const MAY_READ = { source: ['decode'], decode: [], assemble: ['decode'], publish: [], checkpoint: [] };
const STAGE_RULES = STAGES.map((stage) => ({
  name: `stage-${stage}-knows-no-other-stage`,
  severity: 'error',
  comment: `src/pipeline/${stage}/ imports no other stage${MAY_READ[stage].length ? ` but ${MAY_READ[stage].join(', ')}` : ''}: stages are wired by src/relay/relay-session.ts.`,
  from: { path: `^src/pipeline/${stage}/` },
  to: { path: `^src/pipeline/(${STAGES.filter((s) => s !== stage && !MAY_READ[stage].includes(s)).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other in a loop, type-only imports included: split out what both need (a type, a constant) into a module of its own.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-to-dev-or-test',
      severity: 'error',
      comment: 'The relay ships dist/src alone: src/ never imports the dev stack, the tests or their support code.',
      from: { path: '^src/' },
      to: { path: '^(dev|test)/' },
    },
    {
      name: 'whole-config-only-in-config-cli-and-command-declarations',
      severity: 'error',
      comment:
        'Only src/config/, src/cli/, the command declarations (src/commands/command.ts and each */*-command.ts: they pick the config ' +
        'form), the run command (src/commands/run/: relay-wiring.ts builds every stage its settings) and the public API (src/index.ts) ' +
        'see the whole RelayConfig/RunConfig; a stage, and the work of a command, declares the settings it uses.',
      from: {
        path: '^src/',
        pathNot: ['^src/config/', '^src/cli/', '^src/commands/command\\.ts$', '^src/commands/[^/]+/[^/]+-command\\.ts$', '^src/commands/run/', '^src/index\\.ts$'],
      },
      to: { path: '^src/config/(relay-config|run-config)\\.ts$' },
    },
    ...FLOOR_RULES,
    ...STAGE_RULES,
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports and that imports nothing is dead code (or an entry that belongs in the exceptions here).',
      from: {
        orphan: true,
        pathNot: [
          '(^|/)\\.[^/]+\\.(c|m)?js$', // dot files (this one)
          '\\.d\\.ts$',
          '(^|/)tsconfig\\.json$',
          '(^|/)(vitest|vitest\\.unit|vitest\\.fixture|stryker|eslint)\\.config\\.(js|mjs|cjs|ts)$', // tool configs, the containers suite's fixture config too
          '^test/.*\\.test\\.ts$',
          // --import hooks of the fault suite, loaded by path; they import dist/ only, which is not cruised.
          '^test/faults/[^/]+\\.mjs$',
        ],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|reports|coverage|\\.stryker-tmp|\\.scratch)/' },
    // Type-only imports count: the whole-config rule is about a type.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
