import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * Issue 42: a secret given in any way the CLI, the environment or a config file
 * accepts is never printed, whatever the command and however it fails. Nothing
 * needs to run: PostgreSQL, Kafka and the registry are ports nobody listens on,
 * so every command fails at its first connection (the metrics server starts
 * only after preflight, so no HTTP endpoint is ever open to fetch). Everything
 * the process writes on stdout and stderr is searched for the sentinel.
 * The masking is layered (the value kept out of a message where it is made,
 * then the form rule at the exit), so a case can stay green when one layer is
 * removed; the exit code and the `ps` warning are checked too, so that every
 * layer has a case that fails without it (the commit adding this note lists them).
 */
const SENTINEL = `S3ntinel-${randomBytes(6).toString('hex')}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let pgPort = 0;
let kafkaPort = 0;
let dir = '';
beforeAll(async () => {
  pgPort = await freePort();
  kafkaPort = await freePort();
  dir = tempDir('secrets-never-printed-');
});

/** A file in the case's directory holding `content`; its path. */
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

interface Case {
  /** How the secret was given, and to which command. */
  name: string;
  /** The arguments; a function so the ports and files exist when it is called. */
  args: () => string[];
  env?: () => Record<string, string>;
  /** The exit code expected (2: refused as a config error). */
  exitCode?: number;
  /** stderr must carry the "visible in `ps`" warning. */
  psWarning?: boolean;
}

const pgUrl = (auth = `u:${SENTINEL}@`, query = '') => `postgres://${auth}127.0.0.1:${pgPort}/db${query}`;
const common = () => ['--slot', 's', '--connect-timeout-ms', '300', '--brokers', `127.0.0.1:${kafkaPort}`];
const plainUrl = () => pgUrl('u@');

// Every command, with the arguments it needs to get as far as connecting (src/cli/command-registry.ts).
const COMMANDS: Array<[string, string[]]> = [
  ['run', ['run']],
  ['init', ['init']],
  ['reshard', ['reshard', '--from', '2', '--to', '4']],
  ['status', ['status']],
  ['status --json', ['status', '--json']],
  ['verify', ['verify', '--from', '1h']],
  ['verify --json', ['verify', '--from', '1h', '--json']],
  ['replay', ['replay', '--from', '1h']],
  ['prune', ['prune', '--older-than', '7d']],
  ['recover', ['recover']],
  ['doctor', ['doctor']],
  ['doctor --json', ['doctor', '--json']],
];

const perCommand: Case[] = COMMANDS.flatMap(([name, argv]): Case[] => [
  { name: `${name}: flag --database-url, password in the userinfo`, args: () => [...argv, ...common(), '--database-url', pgUrl()], psWarning: true },
  {
    name: `${name}: flag --database-url, ?password= in the query`,
    args: () => [...argv, ...common(), '--database-url', pgUrl('u@', `?password=${SENTINEL}`)],
    psWarning: true,
  },
  {
    name: `${name}: env OUTBOX_TAIL_DATABASE_URL, ?sslpassword= in the query`,
    args: () => [...argv, ...common()],
    env: () => ({ OUTBOX_TAIL_DATABASE_URL: pgUrl('u@', `?sslpassword=${SENTINEL}`) }),
  },
  {
    name: `${name}: env DATABASE_URL without a scheme (refused)`,
    args: () => [...argv, ...common()],
    env: () => ({ DATABASE_URL: `u:${SENTINEL}@127.0.0.1:${pgPort}/db` }),
    exitCode: 2,
  },
]);

const ways: Case[] = [
  // PostgreSQL URL, every source.
  { name: 'run: flag --database-url=<url> (one argument)', args: () => ['run', ...common(), `--database-url=${pgUrl()}`], psWarning: true },
  { name: 'run: env OUTBOX_TAIL_DATABASE_URL, password in the userinfo', args: () => ['run', ...common()], env: () => ({ OUTBOX_TAIL_DATABASE_URL: pgUrl() }) },
  { name: 'run: env DATABASE_URL, password in the userinfo', args: () => ['run', ...common()], env: () => ({ DATABASE_URL: pgUrl() }) },
  {
    name: 'run: flag --database-url, ?sslpassword= in the query',
    args: () => ['run', ...common(), '--database-url', pgUrl('u@', `?sslmode=disable&sslpassword=${SENTINEL}`)],
    psWarning: true,
  },
  { name: 'run: --database-url-file holding the URL', args: () => ['run', ...common(), '--database-url-file', file('url', `${pgUrl()}\n`)] },
  {
    name: 'run: --database-url-file holding a URL without a scheme (refused)',
    args: () => ['run', ...common(), '--database-url-file', file('url-no-scheme', `u:${SENTINEL}@127.0.0.1:${pgPort}/db\n`)],
    exitCode: 2,
  },
  { name: 'run: --pg-password-file', args: () => ['run', ...common(), '--database-url', plainUrl(), '--pg-password-file', file('pgpass', SENTINEL)] },
  { name: 'run: config JSON databaseUrl', args: () => ['run', ...common(), '--config', file('c.json', JSON.stringify({ databaseUrl: pgUrl() }))] },
  { name: 'run: config YAML database-url', args: () => ['run', ...common(), '--config', file('c.yaml', `database-url: ${pgUrl()}\n`)] },
  {
    name: 'run: config JSON with a syntax error on the secret line',
    args: () => ['run', ...common(), '--config', file('bad.json', `{"databaseUrl": "${pgUrl()}" "saslPassword": "${SENTINEL}"}`)],
    exitCode: 2,
  },
  {
    name: 'run: config YAML with a syntax error on the secret line',
    args: () => ['run', ...common(), '--config', file('bad.yaml', `saslPassword: ${SENTINEL}\n  databaseUrl: : ${pgUrl()}\n`)],
    exitCode: 2,
  },
  {
    name: 'run: config YAML with an unknown option beside the secret',
    args: () => ['run', ...common(), '--config', file('unknown.yaml', `databaseUrl: ${pgUrl()}\nbogusOption: 1\n`)],
    exitCode: 2,
  },
  {
    name: 'run: flag --database-url given twice',
    args: () => ['run', ...common(), '--database-url', pgUrl(), '--database-url', pgUrl()],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'run: flag --database-url beside an invalid option',
    args: () => ['run', ...common(), '--database-url', pgUrl(), '--batch-max-messages', '0'],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'run: flag --database-url beside an unknown flag',
    args: () => ['run', ...common(), '--database-url', pgUrl(), '--no-such-flag', 'x'],
    exitCode: 2,
    psWarning: true,
  },
  { name: 'run: the URL as a stray argument (flag name forgotten)', args: () => ['run', ...common(), pgUrl()], exitCode: 2 },
  {
    name: 'run: flag --database-url without a scheme (refused)',
    args: () => ['run', ...common(), '--database-url', `u:${SENTINEL}@127.0.0.1:${pgPort}/db`],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'doctor --json: flag --database-url without a scheme (refused)',
    args: () => ['doctor', '--json', ...common(), '--database-url', `u:${SENTINEL}@127.0.0.1:${pgPort}/db`],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'run: flag --database-url in keyword form host=... password=... (refused)',
    args: () => ['run', ...common(), '--database-url', `host=127.0.0.1 port=${pgPort} user=u password=${SENTINEL}`],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'run: env OUTBOX_TAIL_DATABASE_URL in keyword form (refused)',
    args: () => ['run', ...common()],
    env: () => ({ OUTBOX_TAIL_DATABASE_URL: `host=127.0.0.1 port=${pgPort} password=${SENTINEL}` }),
    exitCode: 2,
  },
  // Doctor's standby.
  {
    name: 'doctor: flag --standby-url, password in the userinfo',
    args: () => ['doctor', ...common(), '--database-url', plainUrl(), '--standby-url', pgUrl()],
    psWarning: true,
  },
  {
    name: 'doctor --json: env OUTBOX_TAIL_STANDBY_URL, ?password= in the query',
    args: () => ['doctor', '--json', ...common(), '--database-url', plainUrl()],
    env: () => ({ OUTBOX_TAIL_STANDBY_URL: pgUrl('u@', `?password=${SENTINEL}`) }),
  },
  {
    name: 'doctor --json: flag --standby-url without a scheme (refused)',
    args: () => ['doctor', '--json', ...common(), '--database-url', plainUrl(), '--standby-url', `u:${SENTINEL}@127.0.0.1:${pgPort}/db`],
    exitCode: 2,
    psWarning: true,
  },
  // Kafka SASL.
  ...(['run', 'doctor'] as const).flatMap((command): Case[] => [
    {
      name: `${command}: flag --sasl-password`,
      args: () => [command, ...common(), '--database-url', plainUrl(), '--sasl-mechanism', 'plain', '--sasl-username', 'u', '--sasl-password', SENTINEL],
      psWarning: true,
    },
    {
      name: `${command}: env OUTBOX_TAIL_SASL_PASSWORD beside an invalid option`,
      args: () => [command, ...common(), '--database-url', plainUrl(), '--sasl-mechanism', 'plain', '--sasl-username', 'u', '--log-level', 'loud'],
      env: () => ({ OUTBOX_TAIL_SASL_PASSWORD: SENTINEL }),
      exitCode: 2,
    },
  ]),
  {
    name: 'run: --sasl-password-file',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--sasl-mechanism',
      'plain',
      '--sasl-username',
      'u',
      '--sasl-password-file',
      file('sasl', SENTINEL),
    ],
  },
  {
    name: 'run: config YAML saslPassword beside an invalid option',
    args: () => ['run', ...common(), '--config', file('sasl.yaml', `saslMechanism: plain\nsaslUsername: u\nsaslPassword: ${SENTINEL}\nbatchMaxMessages: 0\n`)],
    exitCode: 2,
  },
  {
    name: 'run: flag --sasl-password given twice',
    args: () => ['run', ...common(), '--sasl-mechanism', 'plain', '--sasl-username', 'u', '--sasl-password', SENTINEL, '--sasl-password', SENTINEL],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'doctor --json: flag --sasl-oauth-client-secret',
    args: () => [
      'doctor',
      '--json',
      ...common(),
      '--database-url',
      plainUrl(),
      '--sasl-mechanism',
      'oauthbearer',
      '--sasl-oauth-token-endpoint',
      `http://127.0.0.1:${pgPort}/token`,
      '--sasl-oauth-client-id',
      'c',
      '--sasl-oauth-client-secret',
      SENTINEL,
    ],
    psWarning: true,
  },
  {
    name: 'run: env OUTBOX_TAIL_SASL_OAUTH_CLIENT_SECRET',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--sasl-mechanism',
      'oauthbearer',
      '--sasl-oauth-token-endpoint',
      `http://127.0.0.1:${pgPort}/token`,
      '--sasl-oauth-client-id',
      'c',
    ],
    env: () => ({ OUTBOX_TAIL_SASL_OAUTH_CLIENT_SECRET: SENTINEL }),
  },
  {
    name: 'run: flag --sasl-oauth-token-endpoint with a password in the userinfo (refused)',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--sasl-mechanism',
      'oauthbearer',
      '--sasl-oauth-token-endpoint',
      `http://c:${SENTINEL}@127.0.0.1:${pgPort}/token`,
      '--sasl-oauth-client-id',
      'c',
      '--sasl-oauth-client-secret-file',
      file('oauth', 'x'),
    ],
    exitCode: 2,
    psWarning: true,
  },
  // Schema registry.
  {
    name: 'run: flag --schema-registry-password',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--value-format',
      'avro',
      '--schema-registry-url',
      `http://127.0.0.1:${pgPort}`,
      '--schema-registry-username',
      'u',
      '--schema-registry-password',
      SENTINEL,
    ],
    psWarning: true,
  },
  {
    name: 'run: env OUTBOX_TAIL_SCHEMA_REGISTRY_PASSWORD beside an invalid option',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--value-format',
      'avro',
      '--schema-registry-url',
      `http://127.0.0.1:${pgPort}`,
      '--batch-max-bytes',
      '1',
    ],
    env: () => ({ OUTBOX_TAIL_SCHEMA_REGISTRY_PASSWORD: SENTINEL }),
    exitCode: 2,
  },
  {
    name: 'run: --schema-registry-password-file',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--value-format',
      'avro',
      '--schema-registry-url',
      `http://127.0.0.1:${pgPort}`,
      '--schema-registry-password-file',
      file('registry', SENTINEL),
    ],
  },
  {
    name: 'run: flag --schema-registry-url with a password in the userinfo (refused)',
    args: () => [
      'run',
      ...common(),
      '--database-url',
      plainUrl(),
      '--value-format',
      'avro',
      '--schema-registry-url',
      `http://u:${SENTINEL}@127.0.0.1:${pgPort}`,
    ],
    exitCode: 2,
    psWarning: true,
  },
  {
    name: 'doctor --json: env OUTBOX_TAIL_SCHEMA_REGISTRY_URL with a password in the userinfo (refused)',
    args: () => ['doctor', '--json', ...common(), '--database-url', plainUrl(), '--value-format', 'avro'],
    env: () => ({ OUTBOX_TAIL_SCHEMA_REGISTRY_URL: `http://u:${SENTINEL}@127.0.0.1:${pgPort}` }),
    exitCode: 2,
  },
];

describe.concurrent('no secret is ever printed (issue 42)', () => {
  it.each([...perCommand, ...ways].map((c) => [c.name, c] as const))('does not print a secret given by %s', async (_name, c) => {
    const result = await runCli(c.args(), c.env?.() ?? {});
    const printed = `${result.stdout}\n${result.stderr}`;
    const where = printed.split('\n').filter((line) => line.includes(SENTINEL));
    expect(where, `the sentinel was printed (exit ${result.code}):\n${where.join('\n')}`).toEqual([]);
    // It got as far as it could: a connection refused, or the refusal expected; never a crash.
    expect(result.stderr).not.toMatch(/unexpected error/);
    if (c.exitCode !== undefined) expect(result.code, result.stderr).toBe(c.exitCode);
    else expect(result.code, result.stderr).not.toBe(0);
    if (c.psWarning) expect(result.stderr).toMatch(/visible in `ps`/);
  });
});
