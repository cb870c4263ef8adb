/**
 * The fault suite's own stack: startStack() (native processes or containers;
 * the fault hooks kill and restart the real servers) plus a TCP proxy in
 * front of Postgres and one in front of Kafka, for the relay only. Everything
 * else (the writer, the collector, the slot monitor) talks to the servers
 * directly, so a cut path hurts the relay and nothing that measures it.
 *
 * Kafka clients connect wherever the broker's metadata says, so a proxy in
 * front of Kafka needs a listener that advertises the proxy: the proxy starts
 * first, the stack gets an extra listener RELAY advertised at the proxy's
 * address, then the proxy is pointed at that listener.
 */
import pg from 'pg';
import { startStack, type StackHandle, type StartStackOptions } from '../../dev/stack/index.js';
import { TcpProxy } from './tcp-proxy.js';

export interface FaultStack {
  stack: StackHandle;
  /** Direct connections (writer, collector, monitor). */
  databaseUrl: string;
  brokers: string[];
  /** The relay's paths through the proxies. */
  proxied: { databaseUrl: string; brokers: string[] };
  pgProxy: TcpProxy;
  kafkaProxy: TcpProxy;
  /** ALTER SYSTEM SET + pg_reload_conf(); `null` resets a setting. */
  setPostgres(settings: Record<string, string | null>): Promise<void>;
  /** After a scenario, whatever happened: both servers up, both paths open, no latency. */
  repair(): Promise<void>;
  stop(): Promise<void>;
}

const RELAY_LISTENER = 'RELAY';
/** The relays' own password: I12 looks for it in their output. */
export const RELAY_PASSWORD = 'faults-s3cret-pw';
/** The role the relays log in as, created with RELAY_PASSWORD (servers with password auth check it). */
export const RELAY_ROLE = 'faults_relay';

export async function startFaultStack(
  options: {
    log?: (line: string) => void;
    postgresSettings?: Record<string, string>;
    kafkaSettings?: Record<string, string>;
    /** The Kafka proxy reads Kafka framing (the late-request nemesis). */
    kafkaFrames?: boolean;
    /** Native only: extra `kafka-storage format` arguments, e.g. ['--feature', 'transaction.version=2']. */
    kafkaFormatArgs?: string[];
    /** Native only: the Kafka version to run (default OUTBOX_TAIL_KAFKA_VERSION, else 4.1.1). */
    kafkaVersion?: string;
  } = {},
): Promise<FaultStack> {
  const log = options.log ?? (() => undefined);
  // The target is not known until the broker has its listener port.
  const kafkaProxy = await TcpProxy.start({ host: '127.0.0.1', port: 9 }, {}, { kafkaFrames: options.kafkaFrames ?? false });
  const stackOptions: StartStackOptions = {
    log,
    kafkaExtraListeners: { [RELAY_LISTENER]: 'PLAINTEXT' },
    kafkaAdvertisedListeners: { [RELAY_LISTENER]: kafkaProxy.address },
    // Its broker is killed and restarted again and again, beside other test files.
    kafkaQuickStart: true,
    ...(options.postgresSettings ? { postgresSettings: options.postgresSettings } : {}),
    ...(options.kafkaSettings ? { kafkaSettings: options.kafkaSettings } : {}),
    ...(options.kafkaFormatArgs ? { kafkaFormatArgs: options.kafkaFormatArgs } : {}),
    ...(options.kafkaVersion ? { kafkaVersion: options.kafkaVersion } : {}),
  };
  let stack: StackHandle;
  try {
    stack = await startStack(stackOptions);
  } catch (error) {
    await kafkaProxy.close();
    throw error;
  }
  const proxies: TcpProxy[] = [kafkaProxy];
  try {
    const relayListener = stack.kafkaListeners?.[RELAY_LISTENER]?.[0];
    if (!relayListener)
      throw new Error(`the ${stack.provider} stack has no ${RELAY_LISTENER} listener: the fault suite needs a stack it starts (native or testcontainers)`);
    const [kHost, kPort] = relayListener.split(':') as [string, string];
    kafkaProxy.retarget({ host: kHost, port: Number(kPort) });
    log(`kafka listener ${RELAY_LISTENER} advertised through the proxy ${kafkaProxy.address} -> ${relayListener}`);

    // The relays log in with a password of their own (I12 looks for it in their
    // output): a role that has it, so servers with password auth accept it too.
    const admin = new pg.Client({ connectionString: stack.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${RELAY_ROLE} LOGIN SUPERUSER REPLICATION PASSWORD '${RELAY_PASSWORD}'`);
    } finally {
      await admin.end();
    }

    const pgUrl = new URL(stack.databaseUrl);
    const pgProxy = await TcpProxy.start({ host: pgUrl.hostname, port: Number(pgUrl.port) });
    proxies.push(pgProxy);
    const proxiedUrl = (url: string) => {
      const u = new URL(url);
      if (u.port !== pgUrl.port || u.hostname !== pgUrl.hostname) throw new Error(`${u.host} is not this stack's Postgres`);
      u.port = String(pgProxy.port);
      return u.toString();
    };

    const superUrl = stack.databaseUrl;
    return {
      stack,
      databaseUrl: stack.databaseUrl,
      brokers: stack.brokers,
      proxied: { databaseUrl: proxiedUrl(stack.databaseUrl), brokers: [kafkaProxy.address] },
      pgProxy,
      kafkaProxy,
      async setPostgres(settings) {
        const client = new pg.Client({ connectionString: superUrl });
        await client.connect();
        try {
          for (const [name, value] of Object.entries(settings)) {
            if (!/^[a-z_]+$/.test(name)) throw new Error(`bad setting name ${name}`);
            if (value === null) await client.query(`ALTER SYSTEM RESET ${name}`);
            else await client.query(`ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
          }
          await client.query('SELECT pg_reload_conf()');
          // The reload is asynchronous: wait until this backend sees the new values.
          for (const [name, value] of Object.entries(settings)) {
            for (let i = 0; i < 50; i++) {
              const shown = (await client.query<{ v: string }>(`SELECT current_setting($1) AS v`, [name])).rows[0]!.v;
              const reset = value === null;
              if (reset || normalise(shown) === normalise(value)) break;
              await new Promise((r) => setTimeout(r, 100));
            }
          }
        } finally {
          await client.end();
        }
      },
      async repair() {
        kafkaProxy.heal();
        kafkaProxy.setLatency(0);
        if (kafkaProxy.kafkaFrames) kafkaProxy.resetRequestRules();
        pgProxy.heal();
        if (stack.postgres.pid() === undefined) await stack.postgres.start();
        if (stack.kafka.pid() === undefined) await stack.kafka.start();
      },
      async stop() {
        await Promise.allSettled(proxies.map((p) => p.close()));
        await stack.stop();
      },
    };
  } catch (error) {
    await Promise.allSettled(proxies.map((p) => p.close()));
    await stack.stop();
    throw error;
  }
}

/** Only for "did the reload happen yet": '3s' vs '3s', '64MB' vs '64MB'. */
function normalise(value: string): string {
  return value.trim().toLowerCase();
}

/** The URL with another database name, for the proxied relay URL of a test database. */
export function proxiedDatabaseUrl(fs: FaultStack, databaseUrl: string): string {
  const u = new URL(databaseUrl);
  const p = new URL(fs.proxied.databaseUrl);
  u.hostname = p.hostname;
  u.port = p.port;
  return u.toString();
}
