/**
 * A throw-away PostgreSQL server from the locally installed binaries: temp dir,
 * free 127.0.0.1 port, socket inside the temp dir, wal_level=logical.
 * As root, initdb and postgres run as the `postgres` user (initdb refuses root).
 *
 * The postmaster is started as a direct child of this Node process (in its own
 * session), not daemonized by pg_ctl: then Node reaps it when it dies. With
 * pg_ctl the postmaster is re-parented to PID 1, and where PID 1 does not reap
 * orphans (some container/sandbox inits) a kill -9'd postmaster stays a zombie
 * whose pid still looks alive, so Postgres refuses to start again on the same
 * data dir ("lock file postmaster.pid already exists"). Stop modes are sent as
 * the signals pg_ctl would send: SIGTERM smart, SIGINT fast, SIGQUIT immediate.
 */
import { constants } from 'node:fs';
import { access, appendFile, chown, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';
import { queryPostgres, redactUrl } from './probe.js';
import {
  childrenOf,
  freePort,
  guardServer,
  isAlive,
  killServerTree,
  run,
  ServerProcess,
  signalPid,
  sleep,
  tailFile,
  waitAllGone,
  type Guard,
} from './process.js';
import type { ServerControl } from './types.js';
import { POSTGRES_CAPACITY } from './postgres-capacity.js';

export const POSTGRES_DATABASE = 'outbox_tail';

const DEFAULT_SETTINGS: Record<string, string> = {
  wal_level: 'logical',
  ...POSTGRES_CAPACITY,
  // Throw-away test clusters: the crash tests kill the relay, not Postgres,
  // and a Postgres crash (kill -9, -m immediate) still recovers from the WAL
  // as long as the machine itself does not go down.
  fsync: 'off',
  synchronous_commit: 'on',
  full_page_writes: 'off',
  log_line_prefix: '%m [%p] ',
  // Bounded as in production (docker/docker-compose.yml: 2GB): a stuck slot must not fill the disk, and
  // `outbox-tail doctor` warns on an unbounded one (docs/doctor.md), so the demo's stack is bounded too. Far
  // above what any test writes while a slot lags; in postgresql.conf, so ALTER SYSTEM (the fault suite's
  // 64MB) still overrides it. Not in POSTGRES_CAPACITY: the containers get that as -c, which ALTER SYSTEM cannot override.
  max_slot_wal_keep_size: '8GB',
};

const executable = async (path: string) => {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const hasPgBinaries = async (dir: string) => (await executable(join(dir, 'initdb'))) && (await executable(join(dir, 'postgres')));

/** Directory holding initdb and postgres. */
export async function findPostgresBinDir(preferred: string | undefined, pathEnv: string | undefined): Promise<string> {
  if (preferred !== undefined) {
    if (await hasPgBinaries(preferred)) return preferred;
    throw new Error(`PostgreSQL binaries (initdb, postgres) not found in ${preferred} (OUTBOX_TAIL_PG_BINDIR / postgresBinDir)`);
  }
  try {
    const versions = (await readdir('/usr/lib/postgresql')).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const dir = `/usr/lib/postgresql/${v}/bin`;
      if (await hasPgBinaries(dir)) return dir;
    }
  } catch {
    /* not Debian's layout */
  }
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '') continue;
    if (await executable(join(dir, 'initdb'))) {
      const real = dirname(await realpath(join(dir, 'initdb')));
      if (await hasPgBinaries(real)) return real;
    }
  }
  throw new Error(
    'PostgreSQL server binaries (initdb, postgres) not found: run `npm run setup` ' +
      "(as root it installs the Debian package 'postgresql'), set OUTBOX_TAIL_PG_BINDIR, " +
      'or run the tests with a Docker engine (OUTBOX_TAIL_STACK=testcontainers)',
  );
}

interface RunAs {
  uid: number;
  gid: number;
}

async function postgresUser(): Promise<RunAs | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const uid = await run('id', ['-u', 'postgres']);
  const gid = await run('id', ['-g', 'postgres']);
  if (uid.code !== 0 || gid.code !== 0) {
    throw new Error(
      "running as root, but there is no 'postgres' user to run initdb/postgres as (initdb refuses root): " +
        "install the Debian package 'postgresql' (npm run setup) or run as a non-root user",
    );
  }
  return { uid: Number(uid.output.trim()), gid: Number(gid.output.trim()) };
}

const quoteConf = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

export interface NativePostgresOptions {
  binDir: string;
  settings?: Record<string, string>;
  readyTimeoutMs: number;
  log: (line: string) => void;
}

export class NativePostgres implements ServerControl {
  readonly dataDir: string;
  readonly logFile: string;
  readonly confFile: string;
  private server: ServerProcess | null = null;
  private guard: Guard | undefined;
  private port = 0;
  version = '';

  private constructor(
    readonly root: string,
    private readonly user: RunAs | undefined,
    private opts: NativePostgresOptions,
  ) {
    this.dataDir = join(root, 'data');
    this.logFile = join(root, 'postgres.log');
    this.confFile = join(this.dataDir, 'outbox_tail_stack.conf');
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${POSTGRES_DATABASE}`;
  }

  /** The always-present `postgres` database (readiness, CREATE DATABASE). */
  get maintenanceUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get listenPort(): number {
    return this.port;
  }

  static async start(opts: NativePostgresOptions): Promise<NativePostgres> {
    const user = await postgresUser();
    const root = await mkdtemp(join(tmpdir(), 'outbox-tail-pg-'));
    const server = new NativePostgres(root, user, opts);
    try {
      await server.init();
      return server;
    } catch (err) {
      await server.destroy().catch(() => undefined);
      throw err;
    }
  }

  /**
   * A hot standby of `primary` (the same binaries): a physical slot on the primary, an online base backup with the
   * low-level API (pg_backup_start, a copy of the data directory, pg_backup_stop's backup_label), then streaming
   * through that slot. No pg_basebackup: PostgreSQL 16 from Maven Central ships none, and Debian's is another major.
   */
  static async startStandby(primary: NativePostgres, opts: NativePostgresOptions & { physicalSlot: string }): Promise<NativePostgres> {
    const user = await postgresUser();
    const root = await mkdtemp(join(tmpdir(), 'outbox-tail-pg-'));
    const server = new NativePostgres(root, user, opts);
    try {
      await server.initStandby(primary, opts.physicalSlot);
      return server;
    } catch (err) {
      await server.destroy().catch(() => undefined);
      throw err;
    }
  }

  private async initStandby(primary: NativePostgres, physicalSlot: string): Promise<void> {
    const t0 = Date.now();
    if (this.user) await chown(this.root, this.user.uid, this.user.gid);
    this.guard = guardServer(this.root, () => this.pid());
    const client = new pg.Client({ connectionString: primary.maintenanceUrl });
    await client.connect();
    try {
      // Reserved now: the standby streams from the backup's start through it.
      await client.query('select pg_create_physical_replication_slot($1, true)', [physicalSlot]);
      await client.query("select pg_backup_start('outbox-tail standby', true)");
      const copy = await run('cp', ['-a', primary.dataDir, this.dataDir], { timeoutMs: 120_000 });
      if (copy.code !== 0) throw new Error(`copying ${primary.dataDir}: ${copy.output.trim()}`);
      const { rows } = await client.query<{ labelfile: string }>('select labelfile from pg_backup_stop(false)');
      await writeFile(join(this.dataDir, 'backup_label'), rows[0]!.labelfile);
    } finally {
      await client.end();
    }
    // What a base backup leaves out: the primary's process files, its WAL (streamed instead) and its slots.
    for (const entry of ['postmaster.pid', 'postmaster.opts']) await rm(join(this.dataDir, entry), { force: true });
    for (const dir of ['pg_wal', 'pg_replslot']) {
      for (const name of await readdir(join(this.dataDir, dir))) {
        if (name !== 'archive_status') await rm(join(this.dataDir, dir, name), { recursive: true, force: true });
      }
    }
    // postgresql.conf includes the primary's settings file by its absolute path: this server's instead.
    const conf = join(this.dataDir, 'postgresql.conf');
    await writeFile(conf, (await readFile(conf, 'utf8')).split(primary.confFile).join(this.confFile));
    await writeFile(join(this.dataDir, 'standby.signal'), '');
    this.opts = {
      ...this.opts,
      settings: {
        ...this.opts.settings,
        primary_conninfo: `host=127.0.0.1 port=${primary.listenPort} user=postgres dbname=postgres application_name=outbox_tail_standby`,
        primary_slot_name: physicalSlot,
      },
    };
    if (this.user) await run('chown', ['-R', `${this.user.uid}:${this.user.gid}`, this.root]);
    await this.startOnFreePort();
    this.version = (await queryPostgres(this.url)).version;
    this.opts.log(
      `native postgres ${this.version}: standby of 127.0.0.1:${primary.listenPort} ready on 127.0.0.1:${this.port} in ${Date.now() - t0} ms (${this.root})`,
    );
  }

  private async init(): Promise<void> {
    const t0 = Date.now();
    if (this.user) await chown(this.root, this.user.uid, this.user.gid);
    this.guard = guardServer(this.root, () => this.pid());
    const initdb = await this.runPg('initdb', [
      '-D',
      this.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-instructions',
    ]);
    if (initdb.code !== 0) {
      throw new Error(`initdb failed (exit ${initdb.code}) in ${this.dataDir}:\n${initdb.output.trim()}`);
    }
    await appendFile(join(this.dataDir, 'postgresql.conf'), `\ninclude '${this.confFile}'\n`);
    this.opts.log(`native postgres: initdb ${Date.now() - t0} ms`);

    await this.startOnFreePort();

    const admin = new pg.Client({ connectionString: this.maintenanceUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${POSTGRES_DATABASE}`);
    } finally {
      await admin.end();
    }
    this.version = (await queryPostgres(this.url)).version;
    this.opts.log(`native postgres ${this.version}: ready on 127.0.0.1:${this.port} in ${Date.now() - t0} ms (${this.root})`);
  }

  /** A port picked by binding 0 can be taken by someone else before the postmaster binds it: retry with a new port on "Address already in use". */
  private async startOnFreePort(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.port = await freePort();
      await this.writeConf();
      try {
        await this.start();
        break;
      } catch (err) {
        const log = await tailFile(this.logFile, 20);
        if (attempt < 3 && /Address already in use|could not create any TCP\/IP sockets/.test(log)) {
          this.opts.log(`native postgres: port ${this.port} taken, retrying with another port`);
          continue;
        }
        throw err;
      }
    }
  }

  private async writeConf(): Promise<void> {
    const settings: Record<string, string> = {
      ...DEFAULT_SETTINGS,
      ...this.opts.settings,
      listen_addresses: '127.0.0.1',
      port: String(this.port),
      unix_socket_directories: this.root,
    };
    const text = Object.entries(settings)
      .map(([k, v]) => `${k} = ${quoteConf(v)}`)
      .join('\n');
    await writeFile(this.confFile, `# written by outbox-tail dev/stack\n${text}\n`);
    if (this.user) await chown(this.confFile, this.user.uid, this.user.gid);
  }

  private runPg(tool: string, args: string[], timeoutMs = 120_000) {
    // cwd inside the temp dir: the postgres user may not be allowed into the caller's cwd
    return run(join(this.opts.binDir, tool), args, { cwd: this.root, timeoutMs, ...this.user });
  }

  pid(): number | undefined {
    return this.server?.alivePid();
  }

  async start(): Promise<void> {
    if (this.pid() !== undefined) throw new Error(`postgres is already running (pid ${this.server?.pid})`);
    const server = await ServerProcess.start(join(this.opts.binDir, 'postgres'), ['-D', this.dataDir], {
      cwd: this.root,
      logFile: this.logFile,
      pidDir: this.root,
      ...this.user,
    });
    this.server = server;

    const deadline = Date.now() + this.opts.readyTimeoutMs;
    let last: unknown;
    for (;;) {
      if (server.exitInfo !== undefined) {
        throw new Error(
          `postgres exited during start (${server.exitInfo}), data dir ${this.dataDir}, port ${this.port}\n` +
            `--- postgres log tail (${this.logFile}) ---\n${await tailFile(this.logFile)}`,
        );
      }
      try {
        await queryPostgres(this.maintenanceUrl, 2000);
        return;
      } catch (err) {
        last = err;
      }
      if (Date.now() >= deadline) {
        await this.kill('SIGKILL').catch(() => undefined);
        throw new Error(
          `postgres not ready within ${this.opts.readyTimeoutMs} ms at ${redactUrl(this.maintenanceUrl)}: ${(last as Error)?.message}\n` +
            `--- postgres log tail (${this.logFile}) ---\n${await tailFile(this.logFile)}`,
        );
      }
      await sleep(100);
    }
  }

  /**
   * Signals the server and waits until the postmaster and all its children
   * are gone. SIGKILL hits the postmaster and every child (each backend leads
   * its own process group; orphaned backends would hold the shared memory and
   * block the next start); other signals go to the postmaster only
   * (SIGTERM smart, SIGINT fast, SIGQUIT immediate shutdown).
   */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pid = this.pid();
    if (pid === undefined) return;
    const procs = signal === 'SIGKILL' ? killServerTree(pid) : [pid, ...childrenOf(pid)];
    if (signal !== 'SIGKILL') signalPid(pid, signal);
    await this.waitStopped(procs, 30_000);
  }

  /** Fast shutdown (what `pg_ctl stop -m fast` does). */
  async stop(): Promise<void> {
    await this.kill('SIGINT');
  }

  /** Shutdown like `pg_ctl stop -m fast|immediate` (immediate = crash recovery on start), then start. */
  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.kill(mode === 'immediate' ? 'SIGQUIT' : 'SIGINT');
    await this.start();
  }

  private async waitStopped(procs: number[], timeoutMs: number): Promise<void> {
    const exited = this.server ? await this.server.waitExit(timeoutMs) : true;
    if (!exited || !(await waitAllGone(procs, timeoutMs))) {
      throw new Error(`postgres processes still running ${timeoutMs} ms after the stop: ${procs.filter(isAlive).join(', ')}`);
    }
  }

  /** Stops the server (fast shutdown, SIGKILL after 10 s) and removes the temp dir. */
  async destroy(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) {
      const procs = [pid, ...childrenOf(pid)];
      signalPid(pid, 'SIGINT'); // fast shutdown: disconnects clients instead of waiting for them
      if (!(await waitAllGone(procs, 10_000))) {
        killServerTree(pid);
        for (const p of procs) signalPid(p, 'SIGKILL');
        await this.waitStopped(procs, 10_000);
      }
    }
    this.guard?.release();
    this.guard = undefined;
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}
