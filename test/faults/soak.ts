/**
 * `npm run faults -- --soak MINUTES`: Jepsen-style. Two relays on one slot
 * (active and standby, both through the proxies, restarted by a supervisor
 * like systemd would), the steady writer and the idempotent consumer run
 * while a random fault from the scenario list hits every few seconds: broker
 * kill -9, Postgres fast and immediate restarts, relay kill -9 / SIGTERM /
 * SIGSTOP beyond wal_sender_timeout, black holes on either path, latency,
 * oversized and malformed rows (dead-letter policies), a 3,000-row
 * transaction and a transaction held open across faults. At the end every
 * fault is healed and the invariants are checked on the recount.
 */
import pg from 'pg';
import { writeOutboxEvent } from '../../src/consumer/write-outbox-event.js';
import { rng } from '../crash/crash-harness.js';
import type { RelayProcess } from '../support/relay-process.js';
import type { FaultStack } from './fault-stack.js';
import { FaultRun, sleep, type ScenarioResult } from './harness.js';

export interface SoakOptions {
  fs: FaultStack;
  minutes: number;
  seed: number;
  log: (line: string) => void;
}

export interface SoakSummary {
  minutes: number;
  seed: number;
  faults: Record<string, number>;
  relay_starts: number;
  /** Relays started while a server was down or cut off: they exit 3 (preflight) and are restarted. */
  preflight_exits_during_outages: number;
  unexpected_relay_exits: string[];
  bad_rows: number;
  writer: Record<string, unknown>;
  peak_rss_mb: number;
}

const RSS_BOUND_MB = 300;

export async function runSoak(options: SoakOptions): Promise<{ result: ScenarioResult; summary: SoakSummary }> {
  const { fs, log } = options;
  const random = rng(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (lo: number, hi: number) => lo + random() * (hi - lo);
  const faults: Record<string, number> = {};
  const summary: SoakSummary = {
    minutes: options.minutes,
    seed: options.seed,
    faults,
    relay_starts: 0,
    preflight_exits_during_outages: 0,
    unexpected_relay_exits: [],
    bad_rows: 0,
    writer: {},
    peak_rss_mb: 0,
  };

  await fs.setPostgres({ wal_sender_timeout: '5s' });
  const run = await FaultRun.create({
    fs,
    log,
    name: 'soak',
    proxied: true,
    consumer: true,
    deadLetter: true,
    topicConfig: { 'max.message.bytes': '200000' },
    relayEnv: {
      OUTBOX_TAIL_ON_OVERSIZE: 'dead-letter',
      OUTBOX_TAIL_ON_MALFORMED: 'dead-letter',
      OUTBOX_TAIL_BATCH_MAX_BYTES: '100000',
      OUTBOX_TAIL_MAX_IN_FLIGHT_MESSAGES: '5000',
      OUTBOX_TAIL_CONNECT_TIMEOUT_MS: '3000',
      OUTBOX_TAIL_REPLICATION_TIMEOUT_MS: '10000',
    },
  });
  let recovery = 0;
  // Held in an object: TypeScript does not see the closures assign it.
  const state: { held: { client: pg.Client; id: string; faultsLeft: number } | null } = { held: null };
  try {
    await run.query('alter table outbox alter column aggregate_id drop not null');

    // --- two supervised relays ---------------------------------------------------------
    const expectedExit = new Set<RelayProcess>();
    const relays: Array<RelayProcess | null> = [null, null];
    let supervising = true;
    const startAt = (i: number) => {
      relays[i] = run.startRelay();
      summary.relay_starts++;
    };
    startAt(0);
    await relays[0]!.waitForLog((l) => l.event === 'streaming', 60_000);
    startAt(1);
    const supervisor = (async () => {
      while (supervising) {
        for (let i = 0; i < relays.length; i++) {
          const r = relays[i];
          if (r && run.alive(r)) continue;
          if (r && !expectedExit.has(r)) {
            const first = r.stderr().split('\n')[0]?.slice(0, 200) ?? '';
            // A server that cannot be reached at start is a preflight failure by design (exit 3, README
            // "Exit codes"); the supervisor restarts it, as systemd's Restart=always does.
            if (r.child.exitCode === 3 && /(PG|KAFKA)_UNREACHABLE/.test(first)) {
              summary.preflight_exits_during_outages++;
            } else {
              const line = `relay ${r.pid} exited on its own (code ${r.child.exitCode ?? r.child.signalCode}): ${first}`;
              summary.unexpected_relay_exits.push(line);
              log(`[soak] ${line}`);
            }
          }
          await sleep(1_000); // a supervisor's restart delay
          if (supervising) startAt(i);
        }
        await sleep(250);
      }
    })();

    const writer = run.startWriter({ ratePerSecond: 40, payloadPadBytes: 500 });
    await sleep(3_000);

    // --- the faults -----------------------------------------------------------------------
    const insertBad = async (kind: 'oversize' | 'null' | 'headers') => {
      const payload = kind === 'oversize' ? JSON.stringify({ blob: 'x'.repeat(300_000) }) : '{"bad":true}';
      await run.query(
        `insert into outbox(aggregate_type, aggregate_id, event_type, payload, headers) values ('order', $1, 'OrderCreated', $2::jsonb, $3::jsonb)`,
        [kind === 'null' ? null : `bad-${kind}`, payload, kind === 'headers' ? '[1, 2]' : null],
      );
      summary.bad_rows++;
    };
    const liveRelay = () => pick(relays.filter((r): r is RelayProcess => r !== null && run.alive(r)));
    const menu: Record<string, () => Promise<void>> = {
      'kafka-kill': async () => {
        await fs.stack.kafka.kill('SIGKILL');
        await sleep(between(1_000, 5_000));
        await fs.stack.kafka.start();
      },
      'postgres-fast-restart': async () => {
        await fs.stack.postgres.kill('SIGINT');
        await sleep(between(0, 3_000));
        await fs.stack.postgres.start();
      },
      'postgres-immediate-restart': async () => {
        await fs.stack.postgres.kill('SIGQUIT');
        await sleep(between(0, 3_000));
        await fs.stack.postgres.start();
      },
      'relay-kill': async () => {
        const r = liveRelay();
        if (!r) return;
        expectedExit.add(r);
        await r.kill('SIGKILL');
      },
      'relay-sigterm': async () => {
        const r = liveRelay();
        if (!r) return;
        expectedExit.add(r);
        await r.kill('SIGTERM');
      },
      'relay-sigstop': async () => {
        const r = liveRelay();
        if (!r) return;
        process.kill(r.pid, 'SIGSTOP');
        await sleep(between(6_000, 9_000)); // beyond wal_sender_timeout (5 s)
        process.kill(r.pid, 'SIGCONT');
      },
      'kafka-black-hole': async () => {
        fs.kafkaProxy.blackhole();
        await sleep(between(5_000, 35_000));
        fs.kafkaProxy.heal(random() < 0.5 ? 'resume' : 'fresh');
      },
      'postgres-black-hole': async () => {
        fs.pgProxy.blackhole();
        await sleep(between(5_000, 20_000));
        fs.pgProxy.heal(random() < 0.5 ? 'resume' : 'fresh');
      },
      'kafka-latency': async () => {
        fs.kafkaProxy.setLatency(Math.round(between(100, 300)));
        await sleep(between(5_000, 15_000));
        fs.kafkaProxy.setLatency(0);
      },
      'oversized-row': () => insertBad('oversize'),
      'malformed-row': () => insertBad(random() < 0.5 ? 'null' : 'headers'),
      'big-transaction': async () => {
        await run.query(
          `insert into outbox(aggregate_type, aggregate_id, event_type, payload)
           select 'order', 'bulk-' || (g % 50), 'Bulk', jsonb_build_object('n', g, 'pad', repeat('p', 200)) from generate_series(1, 3000) g`,
        );
      },
      'open-transaction': async () => {
        if (state.held) return;
        const client = new pg.Client({ connectionString: run.db.url });
        client.on('error', () => undefined);
        await client.connect();
        await client.query('begin');
        const orderId = 900_000_000 + (faults['open-transaction'] ?? 0);
        const id = await writeOutboxEvent(client, {
          aggregateType: 'order',
          aggregateId: String(orderId),
          eventType: 'OrderCreated',
          payload: { orderId, held: true },
        });
        state.held = { client, id, faultsLeft: 3 + Math.floor(random() * 3) };
      },
    };
    const kinds = Object.keys(menu);
    const deadline = Date.now() + options.minutes * 60_000;
    let n = 0;
    while (Date.now() < deadline) {
      await sleep(between(2_000, 6_000));
      if (Date.now() >= deadline) break;
      const kind = pick(kinds);
      n++;
      faults[kind] = (faults[kind] ?? 0) + 1;
      const t0 = Date.now();
      try {
        await menu[kind]!();
      } catch (error) {
        log(`[soak] fault ${kind} could not be injected: ${(error as Error).message.split('\n')[0]}`);
      }
      log(
        `[soak] #${n} ${kind} (${((Date.now() - t0) / 1000).toFixed(1)} s); kafka records ${run.collector.records.length}, writer ${writer.stats.created} orders / ${writer.stats.errors} failed writes`,
      );
      const held = state.held;
      if (held && --held.faultsLeft <= 0) {
        // A Postgres restart may have killed it: then it rolled back, and its row never existed.
        await held.client.query('commit').catch(() => undefined);
        await held.client.end().catch(() => undefined);
        state.held = null;
      }
    }

    // --- heal, settle, recount ----------------------------------------------------------
    if (state.held) {
      await state.held.client.query('commit').catch(() => undefined);
      await state.held.client.end().catch(() => undefined);
      state.held = null;
    }
    fs.kafkaProxy.heal();
    fs.pgProxy.heal();
    fs.kafkaProxy.setLatency(0);
    if (!fs.stack.kafka.pid()) await fs.stack.kafka.start();
    if (!fs.stack.postgres.pid()) await fs.stack.postgres.start();
    const healed = Date.now();
    recovery = await run.recovered(healed, 180_000).catch((e: Error) => (log(`[soak] ${e.message}`), -1));
    run.check(`I8 everything delivered within 180 s of the last heal (${recovery.toFixed(1)} s)`, recovery >= 0);
    const c = await run.settle({ deliveryBoundMs: 180_000 });
    supervising = false;
    await supervisor;
    const peak = run.peakRssMb();
    summary.peak_rss_mb = Math.round(peak);
    summary.writer = { ...writer.stats };
    const [bad] = await run.query<{ n: string }>(
      `select count(*) as n from outbox where aggregate_id is null or aggregate_id in ('bad-oversize', 'bad-headers')`,
    );
    run.checkCounts(c, { duplicates: 'allowed', deadLettered: Number(bad!.n) });
    run.check(`I11 relay RSS bounded: peak ${peak.toFixed(0)} MB < ${RSS_BOUND_MB} MB`, peak < RSS_BOUND_MB);
    run.check(
      `no relay exited on its own, other than preflight exits while a server was unreachable (${summary.unexpected_relay_exits.length}: ${summary.unexpected_relay_exits.slice(0, 2).join(' | ')})`,
      summary.unexpected_relay_exits.length === 0,
    );
    run.note(
      `${n} faults in ${options.minutes} min (${Object.entries(faults)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ', ',
        )}); ${summary.relay_starts} relay starts (${summary.preflight_exits_during_outages} preflight exits while a server was unreachable); peak RSS ${peak.toFixed(0)} MB; writer ${writer.stats.created} orders, ${writer.stats.errors} failed writes`,
    );
    return { result: run.result(c, Math.max(0, recovery), { soak: true }), summary };
  } catch (error) {
    run.check(`soak ran to the end (${(error as Error).message.split('\n')[0]})`, false);
    return { result: run.result(await run.count().catch(() => null), Math.max(0, recovery)), summary };
  } finally {
    await state.held?.client.end().catch(() => undefined);
    fs.kafkaProxy.heal();
    fs.pgProxy.heal();
    fs.kafkaProxy.setLatency(0);
    await run.close();
    await fs.setPostgres({ wal_sender_timeout: null }).catch(() => undefined);
  }
}
