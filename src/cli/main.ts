import pg from 'pg';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { createLogicalSlot, requireFailoverSupport } from '../admin/failover-slot.js';
import { migrate } from '../admin/migrator.js';
import { describeTarget, splitTable } from '../admin/preflight.js';
import { readSlotStatus } from '../admin/slot-status.js';
import { configSchema, type RelayConfig } from '../config/config-schema.js';
import { envName, flagName, OPTIONS, optionKeys } from '../config/options.js';
import { resolveConfig } from '../config/resolve-config.js';
import { EXIT, OutboxTailError } from '../errors/outbox-tail-error.js';
import { pgConnection } from '../relay/pg-connection.js';
import { classifyPgError } from '../replication/pg-errors.js';
import { runDaemon } from './run-daemon.js';

const DEFAULTS = configSchema.parse({}) as Record<string, unknown>;

/** Declares every config option on a command; no yargs defaults, so precedence stays in resolveConfig. */
function withConfigOptions<T>(y: Argv<T>): Argv<T> {
  let out: Argv<T> = y.option('config', { type: 'string', describe: `JSON or YAML config file [env: OUTBOX_TAIL_CONFIG]`, group: 'Config file' }) as Argv<T>;
  for (const key of optionKeys) {
    const spec = OPTIONS[key];
    const envs = [envName(key), ...(spec.aliasesEnv ?? [])].join(', ');
    const def = DEFAULTS[key] === undefined ? '' : ` [default: ${Array.isArray(DEFAULTS[key]) ? (DEFAULTS[key] as string[]).join(',') : String(DEFAULTS[key])}]`;
    out = out.option(flagName(key), {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      describe: `${spec.describe}${def} [env: ${envs}]`,
      group: `${spec.group}:`,
      ...(spec.choices ? { choices: spec.choices } : {}),
    }) as Argv<T>;
  }
  return out;
}

function loadConfig(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): RelayConfig {
  const configFile = (argv.config as string | undefined) ?? env.OUTBOX_TAIL_CONFIG;
  return resolveConfig({ flags: argv, env, ...(configFile ? { configFile } : {}) });
}

function requireSlot(config: RelayConfig): asserts config is RelayConfig & { slot: string } {
  if (!config.slot) {
    throw new OutboxTailError('CONFIG_INVALID', 'invalid configuration:\n  --slot / OUTBOX_TAIL_SLOT: required', {
      hint: 'name the replication slot to tail, e.g. --slot orders_outbox',
      exitCode: EXIT.CONFIG,
    });
  }
}

function warnSecretsOnCommandLine(argv: string[]): void {
  if (argv.some((a) => /^--database-url(=|$)/.test(a)) && argv.join(' ').match(/:\/\/[^/\s]*:[^@\s]+@/)) {
    process.stderr.write('outbox-tail: warning: a password in --database-url is visible in `ps`; use --database-url-file, OUTBOX_TAIL_DATABASE_URL or a config file\n');
  }
  if (argv.some((a) => /^--sasl-password(=|$)/.test(a))) {
    process.stderr.write('outbox-tail: warning: --sasl-password is visible in `ps`; use --sasl-password-file, OUTBOX_TAIL_SASL_PASSWORD or a config file\n');
  }
}

async function runCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  requireSlot(config);
  return runDaemon(config);
}

async function withClient<T>(config: RelayConfig, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(pgConnection(config));
  try {
    await client.connect();
  } catch (error) {
    throw classifyPgError(error, 'cannot connect to PostgreSQL');
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function initCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  await withClient(config, async (client) => {
    // Refuse before changing anything: --failover-slot on a server without failover slots.
    if (config.slot && config.failoverSlot) await requireFailoverSupport(client, describeTarget(config));
    const result = await migrate(client);
    process.stdout.write(`migrations: applied ${result.applied.join(', ') || 'none'}; already applied ${result.skipped.length}\n`);
    const exists = await client.query('select 1 from pg_publication where pubname = $1', [config.publication]);
    if (exists.rowCount === 0) {
      const [schema, table] = splitTable(config.table);
      await client.query(`create publication ${pg.escapeIdentifier(config.publication)} for table ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} with (publish = 'insert')`);
      process.stdout.write(`publication ${config.publication} created for ${config.table}\n`);
    } else {
      process.stdout.write(`publication ${config.publication} exists\n`);
    }
    if (config.slot) {
      const slot = await client.query<{ failover: boolean | null }>(`select (to_jsonb(s) ->> 'failover')::boolean as failover from pg_replication_slots s where slot_name = $1`, [config.slot]);
      if (slot.rowCount === 0) {
        const created = await createLogicalSlot(client, config.slot, { failover: config.failoverSlot, where: describeTarget(config) });
        process.stdout.write(`slot ${config.slot} created (pgoutput${created.failover ? ', failover = true' : ''})\n`);
      } else {
        const failover = slot.rows[0]!.failover;
        process.stdout.write(`slot ${config.slot} exists${failover === null ? '' : ` (failover = ${failover})`}\n`);
        if (config.failoverSlot && failover === false) {
          process.stderr.write(`outbox-tail: warning: slot ${config.slot} exists with failover = false; --failover-slot applies when the slot is created: with no relay on it, ALTER_REPLICATION_SLOT ${config.slot} (FAILOVER true) on a replication connection, e.g. psql "dbname=... replication=database" (README, Failover slots)\n`);
        }
      }
    }
  });
  return EXIT.OK;
}

async function statusCommand(argv: Record<string, unknown>): Promise<number> {
  const config = loadConfig(argv, process.env);
  requireSlot(config);
  const status = await withClient(config, (client) => readSlotStatus(client, config.slot, config.publication));
  if (argv.json) {
    process.stdout.write(`${JSON.stringify(status)}\n`);
  } else {
    const lines = [
      `slot                 ${status.slot} ${status.exists ? `(${status.plugin})` : 'MISSING'}`,
      `active               ${status.active ? `yes, pid ${status.activePid}` : 'no'}`,
      `confirmed_flush_lsn  ${status.confirmedFlushLsn ?? '-'}`,
      `restart_lsn          ${status.restartLsn ?? '-'}`,
      `current_wal_lsn      ${status.currentWalLsn}`,
      `lag_bytes            ${status.lagBytes ?? '-'}`,
      `retained_wal_bytes   ${status.retainedWalBytes ?? '-'}`,
      `wal_status           ${status.walStatus ?? '-'}`,
      `failover             ${!status.exists ? '-' : (status.failover ?? '- (no failover slots before PostgreSQL 17)')}${status.synced ? ' (synced copy on a standby)' : ''}`,
      `publication          ${status.publication} ${status.publicationExists ? `(${status.publicationTables.join(', ') || 'no tables'})` : 'MISSING'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return status.exists ? EXIT.OK : EXIT.PREFLIGHT;
}

export async function main(argv: string[] = hideBin(process.argv)): Promise<number> {
  warnSecretsOnCommandLine(argv);
  let code: number = EXIT.OK;
  const handle = (fn: (a: Record<string, unknown>) => Promise<number>) => async (a: Record<string, unknown>) => {
    code = await fn(a);
  };
  const cli = yargs(argv)
    .scriptName('outbox-tail')
    .usage('$0 [run] --slot <name>\n\nRelays committed outbox INSERTs from a PostgreSQL logical replication slot to Kafka, confirming the LSN only after Kafka acknowledged them.')
    .command(['run', '$0'], 'tail the slot and publish to Kafka (the daemon)', (y) => withConfigOptions(y), handle(runCommand))
    .command('init', 'apply migrations/, create the publication and (with --slot) the slot if missing', (y) => withConfigOptions(y), handle(initCommand))
    .command('status', 'slot and publication state, lag in bytes', (y) => withConfigOptions(y).option('json', { type: 'boolean', describe: 'print one JSON object' }), handle(statusCommand))
    .command('demo', 'start a local Postgres + Kafka, the relay, and an order writer; print a summary', (y) =>
      y.option('orders', { type: 'number', default: 2000, describe: 'orders to write' }).option('rate', { type: 'number', default: 200, describe: 'orders per second' }),
      handle(async (a) => (await import('./demo.js')).demo({ orders: Number(a.orders), rate: Number(a.rate) })),
    )
    .env(false)
    .strict()
    .help()
    .version()
    .wrap(Math.min(120, process.stdout.columns ?? 120))
    .fail((message, error) => {
      if (error) throw error;
      throw new OutboxTailError('CONFIG_INVALID', message, { hint: 'see `outbox-tail --help`', exitCode: EXIT.CONFIG });
    });
  try {
    await cli.parseAsync();
  } catch (error) {
    if (OutboxTailError.is(error)) {
      process.stderr.write(`outbox-tail: ${error.code}: ${error.describe()}\n`);
      return error.exitCode;
    }
    process.stderr.write(`outbox-tail: unexpected error: ${(error as Error)?.stack ?? error}\n`);
    return EXIT.FATAL;
  }
  return code;
}
