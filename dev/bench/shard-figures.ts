/**
 * The arithmetic of the `shards` scenario (run-bench.ts --shards 1,2,4): from
 * what was sampled around one catch-up of N relays (one per shard, all spawned
 * at once on the same backlog), the figures of the JSON's `shards` entries.
 * Pure, so test/unit/tooling/shard-figures.test.ts checks it without servers.
 */

/** What the bench sampled around one N: wall-clock times in ms since the epoch, CPU in seconds (user + system, /proc). */
export interface ShardCatchupSamples {
  shards: number;
  events: number;
  /** When the relays were spawned (all at once: the earliest spawn). */
  spawnedAt: number;
  /** Each relay's "streaming" log line. */
  streamingAt: readonly number[];
  /** When every record was in Kafka and every shard slot confirmed the end of the backlog. */
  doneAt: number;
  /** Each relay's CPU when it logged "streaming", and when the catch-up was done. */
  relayCpuAtStreaming: readonly number[];
  relayCpuAtDone: readonly number[];
  /**
   * Each shard's walsender CPU when the catch-up was done: its whole life,
   * since a walsender is forked for its relay's replication connection.
   * null where it could not be read (no pid, a remote server).
   */
  walsenderCpuAtDone: ReadonlyArray<number | null>;
  /** The broker and the whole machine (busy seconds, all cores), at spawn and at done; null when unknown. */
  brokerCpu: readonly [number, number] | null;
  machineBusy: readonly [number, number] | null;
  relayPeakRssMb: readonly number[];
}

export interface ShardCatchupFigures {
  shards: number;
  events: number;
  /** Spawn until done. */
  seconds: number;
  /** Spawn until the last relay logged "streaming". */
  startup_seconds: number;
  events_per_sec: number;
  /** events / (seconds - startup_seconds): every relay streaming. */
  events_per_sec_after_startup: number;
  relay_peak_rss_mb: number[];
  /** Every relay's CPU from its "streaming" line to done, per event of the backlog. */
  relay_cpu_us_per_event: number;
  /** Node start-up, preflight and connections of all relays together. */
  relay_startup_cpu_seconds: number;
  /** All walsenders together, per event: each decodes the whole backlog's WAL. */
  walsender_cpu_us_per_event: number | null;
  /** walsender_cpu_us_per_event / N: what one slot's decoding costs per event written. */
  walsender_cpu_us_per_event_per_slot: number | null;
  /** Over spawn..done. */
  broker_cpu_us_per_event: number | null;
  /** The machine's busy CPU minus relays (startup included), walsenders and broker: PostgreSQL's other processes, the bench, the rest. */
  other_cpu_us_per_event: number | null;
  machine_busy_cores: number | null;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** CPU seconds spent on `events` events, in microseconds per event (0.1 us). */
export function usPerEvent(cpuSeconds: number, events: number): number {
  if (!(events > 0)) throw new Error(`usPerEvent: events must be positive, got ${events}`);
  return round((cpuSeconds * 1e6) / events);
}

export function shardCatchupFigures(s: ShardCatchupSamples): ShardCatchupFigures {
  const n = s.shards;
  for (const [what, xs] of [
    ['streamingAt', s.streamingAt],
    ['relayCpuAtStreaming', s.relayCpuAtStreaming],
    ['relayCpuAtDone', s.relayCpuAtDone],
    ['walsenderCpuAtDone', s.walsenderCpuAtDone],
    ['relayPeakRssMb', s.relayPeakRssMb],
  ] as const)
    if (xs.length !== n) throw new Error(`shardCatchupFigures: ${what} has ${xs.length} values for ${n} shards`);
  const seconds = (s.doneAt - s.spawnedAt) / 1000;
  const startup = (Math.max(...s.streamingAt) - s.spawnedAt) / 1000;
  const relayTotal = sum(s.relayCpuAtDone);
  const relayStreaming = relayTotal - sum(s.relayCpuAtStreaming);
  const walsenders = s.walsenderCpuAtDone.every((x): x is number => x !== null) ? sum(s.walsenderCpuAtDone as number[]) : null;
  const broker = s.brokerCpu ? s.brokerCpu[1] - s.brokerCpu[0] : null;
  const machine = s.machineBusy ? s.machineBusy[1] - s.machineBusy[0] : null;
  const other = machine === null || walsenders === null || broker === null ? null : machine - relayTotal - walsenders - broker;
  return {
    shards: n,
    events: s.events,
    seconds: round(seconds, 2),
    startup_seconds: round(startup, 2),
    events_per_sec: Math.round(s.events / seconds),
    events_per_sec_after_startup: Math.round(s.events / (seconds - startup)),
    relay_peak_rss_mb: s.relayPeakRssMb.map((mb) => Math.round(mb)),
    relay_cpu_us_per_event: usPerEvent(relayStreaming, s.events),
    relay_startup_cpu_seconds: round(sum(s.relayCpuAtStreaming), 2),
    walsender_cpu_us_per_event: walsenders === null ? null : usPerEvent(walsenders, s.events),
    walsender_cpu_us_per_event_per_slot: walsenders === null ? null : usPerEvent(walsenders / n, s.events),
    broker_cpu_us_per_event: broker === null ? null : usPerEvent(broker, s.events),
    other_cpu_us_per_event: other === null ? null : usPerEvent(Math.max(0, other), s.events),
    machine_busy_cores: machine === null || seconds <= 0 ? null : round(machine / seconds, 2),
  };
}

/** Each N's catch-up against the first N of the list (1 when it leads): the scaling the scenario is about. */
export function speedups(figures: ReadonlyArray<Pick<ShardCatchupFigures, 'shards' | 'events_per_sec' | 'events_per_sec_after_startup'>>): Array<{
  shards: number;
  vs_shards: number;
  events_per_sec: number;
  events_per_sec_after_startup: number;
}> {
  const base = figures[0];
  if (!base) return [];
  return figures.map((f) => ({
    shards: f.shards,
    vs_shards: base.shards,
    events_per_sec: round(f.events_per_sec / base.events_per_sec, 2),
    events_per_sec_after_startup: round(f.events_per_sec_after_startup / base.events_per_sec_after_startup, 2),
  }));
}
