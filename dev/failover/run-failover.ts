/**
 * Failover proof on PostgreSQL 17+ (issue 12): a primary and a physical
 * streaming standby, both containers of the local image, the relay's slot
 * created by `outbox-tail init --failover-slot` and synchronized to the
 * standby (pg_replication_slots.synced = t there); the primary is killed while
 * rows are written, the standby is promoted, a relay pointed at the new
 * primary resumes from the synced slot, and every row the new primary has is
 * in Kafka, with nothing else there.
 *
 *   npm run build && bin/with-engine.sh node --import tsx dev/failover/run-failover.ts [--json]
 *   OUTBOX_TAIL_PG_MAJOR=18 bin/with-engine.sh node --import tsx dev/failover/run-failover.ts
 *
 * Needs the testcontainers stack (bin/with-engine.sh sets it): the primary is
 * the stack's Postgres, the standby a container that reaches it through the
 * host's loopback (slirp4netns allow_host_loopback: 10.0.2.2 is the host).
 */
import pg from 'pg';
import { startStack, type StackHandle } from '../stack/index.js';
import { freePort } from '../stack/process.js';
import { loopbackPortBindings, OWNER_LABEL } from '../stack/testcontainers-stack.js';
import { createTestDatabase, uniqueName } from '../../test/support/database.js';
import { KafkaCollector } from '../../test/support/kafka-collector.js';
import { startRelay, type RelayProcess } from '../../test/support/relay-process.js';
import { runCli, type CliResult } from '../../test/support/run-cli.js';
import { POSTGRES_CAPACITY } from '../stack/postgres-capacity.js';

const PHYSICAL_SLOT = 'standby1';
const HOST_FROM_CONTAINER = '10.0.2.2';
const json = process.argv.includes('--json');
const log = (line: string) => process.stderr.write(`[failover] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function q<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(250);
  }
}

function cli(args: string[], databaseUrl: string): Promise<CliResult> {
  return runCli(args, { OUTBOX_TAIL_DATABASE_URL: databaseUrl });
}

/** The standby: pg_basebackup from the primary (-R: standby.signal, primary_conninfo with a dbname, primary_slot_name), then postgres. */
async function startStandby(opts: { image: string; primaryPort: number; dbname: string; networkMode: string }) {
  const { GenericContainer, Wait } = await import('testcontainers');
  const port = await freePort();
  class LoopbackStandby extends GenericContainer {
    protected override async beforeContainerCreated(): Promise<void> {
      this.hostConfig.PortBindings = loopbackPortBindings({ 5432: port });
    }
  }
  const conninfo = `host=${HOST_FROM_CONTAINER} port=${opts.primaryPort} user=postgres password=postgres dbname=${opts.dbname}`;
  const settings = {
    listen_addresses: '0.0.0.0',
    wal_level: 'logical',
    hot_standby: 'on',
    hot_standby_feedback: 'on',
    sync_replication_slots: 'on',
    ...POSTGRES_CAPACITY,
  };
  const script = [
    'set -e',
    'mkdir -p "$PGDATA" /var/run/postgresql && chown postgres:postgres "$PGDATA" /var/run/postgresql && chmod 700 "$PGDATA"',
    `exec setpriv --reuid=postgres --regid=postgres --init-groups bash -c 'pg_basebackup -d "$PRIMARY_CONNINFO" -D "$PGDATA" -R -X stream -S ${PHYSICAL_SLOT} --checkpoint=fast && exec postgres $PG_ARGS'`,
  ].join('\n');
  const container = await new LoopbackStandby(opts.image)
    .withLabels({ [OWNER_LABEL]: String(process.pid) })
    .withNetworkMode(opts.networkMode)
    .withExposedPorts({ container: 5432, host: port })
    .withEnvironment({
      PRIMARY_CONNINFO: conninfo,
      PG_ARGS: Object.entries(settings)
        .map(([k, v]) => `-c ${k}=${v}`)
        .join(' '),
    })
    .withEntrypoint(['bash', '-c'])
    .withCommand([script])
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept read-only connections/))
    .withStartupTimeout(120_000)
    .start();
  return { container, url: `postgres://postgres:postgres@127.0.0.1:${port}/${opts.dbname}`, port };
}

interface Writer {
  stop(): Promise<void>;
  readonly acknowledged: number;
}

/** Inserts one outbox row per transaction until stopped or the server goes away. */
function startWriter(url: string, type: string, prefix: string): Writer {
  let running = true;
  let acknowledged = 0;
  const done = (async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined);
    await c.connect();
    try {
      for (let i = 0; running; i++) {
        await c.query(`insert into outbox(aggregate_type, aggregate_id, event_type, payload) values ($1, $2, 'E', '{}')`, [type, `${prefix}-${i}`]);
        acknowledged++;
        await sleep(5);
      }
    } catch (error) {
      if (running) log(`writer ${prefix} stopped: ${(error as Error).message}`);
    } finally {
      await c.end().catch(() => undefined);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
    },
    get acknowledged() {
      return acknowledged;
    },
  };
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const stack: StackHandle = await startStack({ log });
  let standby: Awaited<ReturnType<typeof startStandby>> | undefined;
  const relays: RelayProcess[] = [];
  const collector = new KafkaCollector(stack.brokers);
  try {
    if (stack.provider !== 'testcontainers') throw new Error(`needs the testcontainers stack (bin/with-engine.sh), got ${stack.provider}`);
    const primaryPort = Number(new URL(stack.databaseUrl).port);
    const db = await createTestDatabase(stack);
    const [version] = await q<{ num: string; v: string }>(
      db.url,
      `select current_setting('server_version_num') as num, current_setting('server_version') as v`,
    );
    if (Number(version!.num) < 170000) throw new Error(`needs PostgreSQL 17+, the stack runs ${version!.v}`);
    log(`primary PostgreSQL ${version!.v} on 127.0.0.1:${primaryPort}, database ${db.name}`);

    // Primary: the standby's physical slot, and logical failover slots wait for it.
    await q(db.url, `select pg_create_physical_replication_slot($1, true)`, [PHYSICAL_SLOT]);
    await q(db.url, `alter system set synchronized_standby_slots = '${PHYSICAL_SLOT}'`);
    await q(db.url, `select pg_reload_conf()`);
    const slot = uniqueName('failover');
    const init = await cli(['init', '--slot', slot, '--failover-slot'], db.url);
    if (init.code !== 0) throw new Error(`init --failover-slot failed: ${init.stderr}`);
    log(init.stdout.trim().split('\n').at(-1)!);

    standby = await startStandby({
      image: stack.images!.postgres,
      primaryPort,
      dbname: db.name,
      networkMode: process.env.OUTBOX_TAIL_TC_NETWORK_MODE_STANDBY ?? 'slirp4netns:allow_host_loopback=true',
    });
    const standbyUrl = standby.url;
    log(`standby streaming from ${HOST_FROM_CONTAINER}:${primaryPort}, on 127.0.0.1:${standby.port}`);
    const [conf] = await q<{ conninfo: string; slot: string }>(
      standbyUrl,
      `select current_setting('primary_conninfo') as conninfo, current_setting('primary_slot_name') as slot`,
    );
    log(`standby primary_slot_name=${conf!.slot}, primary_conninfo has dbname: ${/dbname=/.test(conf!.conninfo)}`);

    const type = uniqueName('fo');
    await collector.start([`outbox.event.${type}`]);
    const relayEnv = { OUTBOX_TAIL_RESTART_BACKOFF_MAX_MS: '500' };
    const first = startRelay({ databaseUrl: db.url, brokers: stack.brokers, slot, env: relayEnv });
    relays.push(first);
    await first.waitForLog((l) => l.event === 'streaming', 30_000);
    const writerA = startWriter(db.url, type, 'a');
    await until('the first rows in Kafka', 30_000, async () => collector.distinctIds().size >= 50);

    // The slot sync worker copies the failover slot; it is usable after a failover once synced and persistent.
    await q(db.url, 'select pg_log_standby_snapshot()');
    const synced = await until('the failover slot synced on the standby', 90_000, async () => {
      const [row] = await q<{ synced: boolean; temporary: boolean; failover: boolean; confirmed: string }>(
        standbyUrl,
        `select synced, temporary, failover, confirmed_flush_lsn::text as confirmed from pg_replication_slots where slot_name = $1`,
        [slot],
      );
      return row && row.synced && !row.temporary ? row : undefined;
    });
    log(`standby: slot ${slot} synced=${synced.synced} failover=${synced.failover} temporary=${synced.temporary} confirmed_flush_lsn=${synced.confirmed}`);
    const [primarySlot] = await q<{ failover: boolean; confirmed: string }>(
      db.url,
      `select failover, confirmed_flush_lsn::text as confirmed from pg_replication_slots where slot_name = $1`,
      [slot],
    );

    // A relay pointed at the standby too early (before the promotion): what does it say?
    const early = startRelay({ databaseUrl: standbyUrl, brokers: stack.brokers, slot, env: relayEnv });
    relays.push(early);
    const earlyExit = await Promise.race([early.exited, sleep(30_000).then(() => null)]);
    const earlyLine =
      early
        .stderr()
        .split('\n')
        .find((l) => l.startsWith('outbox-tail:')) ??
      early.logs
        .filter((l) => l.level !== 'raw')
        .slice(-1)
        .map((l) => JSON.stringify(l))[0] ??
      '';
    log(`relay on the standby before promotion: exit ${earlyExit ? earlyExit.code : 'none within 30 s'}: ${earlyLine}`);
    await early.kill('SIGKILL');

    // Failover: rows still being written, the primary is killed, the standby promoted.
    await sleep(1_000);
    const beforeKill = collector.distinctIds().size;
    await stack.postgres.kill('SIGKILL');
    await writerA.stop();
    log(`primary killed (kill -9) with ${writerA.acknowledged} rows acknowledged to the writer, ${beforeKill} ids in Kafka before the kill`);
    await first.kill('SIGKILL');
    await q(standbyUrl, 'select pg_promote(true, 60)');
    const [promoted] = await q<{ recovery: boolean }>(standbyUrl, 'select pg_is_in_recovery() as recovery');
    const [afterPromotion] = await q<{ synced: boolean; failover: boolean; confirmed: string; invalidation: string | null }>(
      standbyUrl,
      `select synced, failover, confirmed_flush_lsn::text as confirmed, invalidation_reason as invalidation from pg_replication_slots where slot_name = $1`,
      [slot],
    );
    log(`standby promoted (in recovery: ${promoted!.recovery}); slot ${slot}: ${JSON.stringify(afterPromotion)}`);

    // The relay pointed at the new primary resumes from the synced slot.
    const second = startRelay({ databaseUrl: standbyUrl, brokers: stack.brokers, slot, env: relayEnv });
    relays.push(second);
    await second.waitForLog((l) => l.event === 'streaming', 30_000);
    const writerB = startWriter(standbyUrl, type, 'b');
    await sleep(2_000);
    await writerB.stop();
    // pg_basebackup copied the old primary's postgresql.auto.conf: the new
    // primary names a physical slot it does not have in
    // synchronized_standby_slots, and its walsender holds back every change of
    // a failover slot until that standby confirms it.
    const [inherited] = await q<{ v: string }>(standbyUrl, `select current_setting('synchronized_standby_slots') as v`);
    const kafkaBeforeReset = collector.distinctIds().size;
    let blockedBySynchronizedStandbySlots = false;
    if (inherited!.v !== '') {
      await sleep(5_000);
      blockedBySynchronizedStandbySlots = collector.distinctIds().size === kafkaBeforeReset;
      log(
        `new primary inherited synchronized_standby_slots = '${inherited!.v}'; ids in Kafka ${kafkaBeforeReset} -> ${collector.distinctIds().size} after 5 s more: ${blockedBySynchronizedStandbySlots ? 'held back' : 'flowing'}; resetting it`,
      );
      await q(standbyUrl, 'alter system reset synchronized_standby_slots');
      await q(standbyUrl, 'select pg_reload_conf()');
    }
    const [count] = await q<{ n: string }>(standbyUrl, 'select count(*) as n from outbox where aggregate_type = $1', [type]);
    const committed = Number(count!.n);
    await until(`${committed} distinct ids in Kafka`, 60_000, async () => collector.distinctIds().size >= committed).catch((error) => {
      log(
        `relay on the new primary, last log lines:\n${second.logs
          .slice(-15)
          .map((l) => JSON.stringify(l))
          .join('\n')}\n${second.stderr().slice(-2000)}`,
      );
      throw error;
    });
    await sleep(1_000);
    const ids = new Set((await q<{ id: string }>(standbyUrl, 'select id::text as id from outbox where aggregate_type = $1', [type])).map((r) => r.id));
    const kafkaIds = collector.distinctIds();
    const lost = [...ids].filter((id) => !kafkaIds.has(id)).length;
    const phantoms = [...kafkaIds].filter((id) => !ids.has(id)).length;
    const result = {
      postgres: version!.v,
      slot,
      primary_slot_failover: primarySlot!.failover,
      standby_synced_before_failover: synced.synced,
      standby_slot_confirmed_before_failover: synced.confirmed,
      rows_acknowledged_old_primary: writerA.acknowledged,
      rows_acknowledged_new_primary: writerB.acknowledged,
      rows_on_new_primary: committed,
      new_primary_inherited_synchronized_standby_slots: inherited!.v,
      held_back_until_reset: blockedBySynchronizedStandbySlots,
      relay_on_standby_before_promotion: `exit ${earlyExit ? earlyExit.code : 'none'}: ${earlyLine.slice(0, 200)}`,
      relay_warned_at_start: second.logs.some((l) => l.event === 'synchronized-standby-slots-missing'),
      kafka_records: collector.records.length,
      kafka_distinct_ids: kafkaIds.size,
      duplicates: collector.records.length - kafkaIds.size,
      lost,
      phantoms,
      seconds: Math.round((Date.now() - t0) / 100) / 10,
      passed:
        lost === 0 &&
        phantoms === 0 &&
        primarySlot!.failover === true &&
        synced.synced === true &&
        kafkaIds.size === committed &&
        // Too early on the standby: a clear preflight refusal (exit 3, restarted by a supervisor), not "slot lost".
        earlyExit?.code === 3 &&
        earlyLine.includes('SERVER_IS_STANDBY') &&
        // The inherited synchronized_standby_slots is named at start.
        second.logs.some((l) => l.event === 'synchronized-standby-slots-missing'),
    };
    if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else for (const [k, v] of Object.entries(result)) process.stdout.write(`  ${k.padEnd(48)} ${v}\n`);
    return result.passed ? 0 : 1;
  } finally {
    await Promise.all(relays.map((r) => r.kill('SIGKILL')));
    await collector.stop();
    await standby?.container.stop({ timeout: 5 }).catch(() => undefined);
    await stack.stop().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`[failover] FAILED: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
