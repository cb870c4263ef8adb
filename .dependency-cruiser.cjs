// The import rules of docs/architecture.md (Floor plan), checked by `npm run lint`:
// depcruise reads the real imports (type-only ones too), so a rule cannot drift from the code.
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
      name: 'whole-config-only-in-config-and-cli',
      severity: 'error',
      comment:
        'Only src/config/, src/cli/ (the wiring, src/cli/relay-wiring.ts, among it) and the public API (src/index.ts) see the whole RelayConfig/RunConfig; ' +
        'a stage declares the settings it uses and relay-wiring.ts builds them (commands get them from the CLI).',
      from: { path: '^src/', pathNot: ['^src/config/', '^src/cli/', '^src/index\\.ts$'] },
      to: { path: '^src/config/(relay-config|run-config)\\.ts$' },
    },
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
