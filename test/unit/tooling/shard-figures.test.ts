import { describe, expect, it } from 'vitest';
import { shardCatchupFigures, speedups, usPerEvent, type ShardCatchupSamples } from '../../../dev/bench/shard-figures.js';

/** Two relays on a 60,000-event backlog: spawned at t=1000 s, streaming 1 s and 1.5 s later, done 11 s after the spawn. */
const twoShards: ShardCatchupSamples = {
  shards: 2,
  events: 60_000,
  spawnedAt: 1_000_000,
  streamingAt: [1_001_000, 1_001_500],
  doneAt: 1_011_000,
  relayCpuAtStreaming: [0.4, 0.5],
  relayCpuAtDone: [2.2, 2.3],
  walsenderCpuAtDone: [1.5, 1.5],
  brokerCpu: [10, 11.2],
  machineBusy: [100, 118],
  relayPeakRssMb: [101.4, 98.6],
};

describe('shard scenario figures', () => {
  it('times the catch-up from the spawn, and after start-up from the last relay that logged "streaming"', () => {
    const f = shardCatchupFigures(twoShards);
    expect(f).toMatchObject({
      seconds: 11,
      startup_seconds: 1.5,
      events_per_sec: Math.round(60_000 / 11),
      events_per_sec_after_startup: Math.round(60_000 / 9.5),
    });
  });

  it('splits the walsenders per slot: each decodes the whole WAL, so the per-slot cost is the total over N', () => {
    const f = shardCatchupFigures(twoShards);
    expect(f.walsender_cpu_us_per_event).toBe(50);
    expect(f.walsender_cpu_us_per_event_per_slot).toBe(25);
  });

  it('counts the relays from "streaming" per event, their start-up apart, and leaves the rest of the machine to "other"', () => {
    const f = shardCatchupFigures(twoShards);
    // (2.2 - 0.4) + (2.3 - 0.5) = 3.6 s over 60,000 events.
    expect(f.relay_cpu_us_per_event).toBe(60);
    expect(f.relay_startup_cpu_seconds).toBe(0.9);
    expect(f.broker_cpu_us_per_event).toBe(20);
    // 18 busy seconds - 4.5 relays - 3 walsenders - 1.2 broker = 9.3 s.
    expect(f.other_cpu_us_per_event).toBe(155);
    expect(f.machine_busy_cores).toBe(round2(18 / 11));
    expect(f.relay_peak_rss_mb).toEqual([101, 99]);
  });

  it('reports no walsender figure when one walsender could not be read, rather than a partial sum', () => {
    const f = shardCatchupFigures({ ...twoShards, walsenderCpuAtDone: [1.5, null] });
    expect(f.walsender_cpu_us_per_event).toBeNull();
    expect(f.walsender_cpu_us_per_event_per_slot).toBeNull();
    expect(f.other_cpu_us_per_event).toBeNull();
  });

  it('refuses samples that do not have one value per shard', () => {
    expect(() => shardCatchupFigures({ ...twoShards, relayPeakRssMb: [100] })).toThrow(/relayPeakRssMb has 1 values for 2 shards/);
  });

  it('relates every N to the first of the list', () => {
    expect(
      speedups([
        { shards: 1, events_per_sec: 10_000, events_per_sec_after_startup: 12_000 },
        { shards: 2, events_per_sec: 11_000, events_per_sec_after_startup: 15_000 },
      ]),
    ).toEqual([
      { shards: 1, vs_shards: 1, events_per_sec: 1, events_per_sec_after_startup: 1 },
      { shards: 2, vs_shards: 1, events_per_sec: 1.1, events_per_sec_after_startup: 1.25 },
    ]);
  });

  it('converts CPU seconds to microseconds per event and refuses zero events', () => {
    expect(usPerEvent(0.5, 20_000)).toBe(25);
    expect(() => usPerEvent(1, 0)).toThrow(/events must be positive/);
  });
});

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
