import pg from 'pg';
import { EXIT, OutboxTailError } from '../../shared/outbox-tail-error.js';
import { describeTarget } from '../../postgres/describe-target.js';
import { Lsn } from '../../shared/lsn.js';
import { dropSlot, readSlots } from '../../postgres/slots/slot-catalog.js';
import { createShardSet } from '../init/init-shards.js';
import { requireRowFilters } from '../../postgres/shard-check.js';
import { allShards, shardName } from '../../shared/shard-spec.js';

export interface ReshardConfig {
  slot: string;
  publication: string;
  table: string;
  columnAggregateId: string;
  source: 'table' | 'messages' | 'both';
  delivery: 'at-least-once' | 'exactly-once';
  databaseUrl?: string | undefined;
  failoverSlot?: boolean;
  from: number;
  to: number;
  /** Base names of the new shard set (they must differ from the old: shard i of both sets would share a name). */
  toSlot: string;
  toPublication: string;
  pollMs?: number;
  /** How long each wait may take before the command gives up (nothing is dropped then). */
  stepTimeoutMs: number;
}

/** The steps as the operator sees them; `onStep` tells when to act (stop the old relays, start the new). */
export type ReshardStep =
  | { step: 'created'; slots: string[]; consistentPoint: string }
  | { step: 'old-past-new'; oldConfirmed: string[] }
  | { step: 'stop-old-start-new'; stop: string[]; start: string[] }
  | { step: 'new-past-old'; oldLastConfirmed: string; newConfirmed: string[] }
  | { step: 'dropped'; slots: string[]; publications: string[] };

export interface ReshardReport {
  from: number;
  to: number;
  consistentPoint: string;
  oldLastConfirmed: string;
  /** WAL the new relays republish (at least once): from the new slots' consistent point to the old slots' last confirmed position. */
  overlapBytes: number;
  dropped: string[];
}

const EXACTLY_ONCE_PROCEDURE =
  'stop-the-world instead: stop the writers (or accept a pause), wait until every old slot is confirmed to pg_current_wal_lsn() ' +
  '(outbox-tail status --shards N), stop the old relays, run `outbox-tail init --shards M` with new names, start the new relays, ' +
  'then drop the old slots (docs/sharding.md, Resharding with exactly-once delivery)';

function refused(message: string, hint: string): OutboxTailError {
  return new OutboxTailError('RESHARD_REFUSED', message, { hint, exitCode: EXIT.PREFLIGHT });
}

function oldRelayRestarted(slots: string[]): OutboxTailError {
  return refused(
    `reshard: an old relay started again after it was stopped (slot ${slots.join(', ')} active again); the old slots were not dropped`,
    'stop the old relays for good (e.g. systemctl disable --now, or scale their Deployment to 0), then drop the old slots and ' +
      'publications by hand (pg_drop_replication_slot, docs/sharding.md, Resharding); the new relays keep running',
  );
}

/**
 * `outbox-tail reshard --from N --to M`: moves a running sharded outbox from
 * N to M shards with nothing lost. The new slots are created while the old
 * relays run; the old relays stop only once their slots are confirmed past
 * the new slots' consistent point, so every transaction is delivered by the
 * old set (commit before the point) or the new one (after it), and per-key
 * order holds (the new relays start after the old ones stopped). The
 * transactions between the consistent point and where the old relays
 * stopped are published twice (at least once; the idempotent consumer
 * absorbs them): a bounded overlap, reported. The old slots are dropped only
 * once every new slot is confirmed past the old ones' last position.
 */
export async function reshard(client: pg.Client, config: ReshardConfig, onStep: (step: ReshardStep) => void): Promise<ReshardReport> {
  if (config.delivery === 'exactly-once') {
    throw refused(
      'reshard cannot keep exactly-once delivery: the new shards start with new transactional ids and no watermark, so the ' +
        "overlap between the old relays' last position and the new slots' start would reach read_committed consumers twice",
      EXACTLY_ONCE_PROCEDURE,
    );
  }
  if (config.source !== 'table') {
    throw refused(
      `reshard runs on --source table only: outbox_tail.emit switches every writer to the new message prefixes at once, while old relays still read the old ones`,
      EXACTLY_ONCE_PROCEDURE,
    );
  }
  if (config.toSlot === config.slot || config.toPublication === config.publication) {
    throw refused('the new shard set needs other base names than the old (--to-slot, --to-publication)', 'e.g. --to-slot orders_outbox_v2');
  }
  const where = describeTarget(config);
  const version = (
    await client.query<{ v: string; n: number }>(`select current_setting('server_version') as v, current_setting('server_version_num')::int as n`)
  ).rows[0]!;
  requireRowFilters(version.n, version.v, where);
  const oldSlots = allShards(config.from).map((s) => shardName(config.slot, s.index));
  const oldPublications = allShards(config.from).map((s) => shardName(config.publication, s.index));
  const newSlots = allShards(config.to).map((s) => shardName(config.toSlot, s.index));
  const confirmed = async (slots: string[]) => {
    const rows = await readSlots(client, slots);
    return slots.map((name) => {
      const row = rows.get(name);
      if (!row?.confirmedFlushLsn) throw refused(`slot ${name} does not exist`, 'check --slot, --from (outbox-tail status --shards N)');
      return { name, lsn: Lsn.parse(row.confirmedFlushLsn), active: row.active };
    });
  };
  await confirmed(oldSlots);
  const poll = async <T>(what: string, probe: () => Promise<T | null>): Promise<T> => {
    const deadline = Date.now() + config.stepTimeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== null) return value;
      if (Date.now() > deadline)
        throw refused(
          `reshard: ${what} did not happen within ${config.stepTimeoutMs} ms; nothing was dropped`,
          'start the relays the step waits for and run reshard again, or finish by hand (docs/sharding.md, Resharding)',
        );
      await new Promise((r) => setTimeout(r, config.pollMs ?? 200));
    }
  };

  // 1. The new set, while the old relays run. A new slot's confirmed_flush_lsn is its consistent point until a relay confirms.
  await createShardSet(client, {
    publication: config.toPublication,
    table: config.table,
    slot: config.toSlot,
    failoverSlot: config.failoverSlot ?? false,
    columnAggregateId: config.columnAggregateId,
    count: config.to,
    where,
  });
  const consistentPoint = (await confirmed(newSlots)).reduce<bigint>((max, s) => (s.lsn > max ? s.lsn : max), 0n);
  onStep({ step: 'created', slots: newSlots, consistentPoint: Lsn.format(Lsn.of(consistentPoint)) });

  // 2. Every old slot past the consistent point: the old set delivered every transaction the new set does not have.
  const oldPast = await poll("the old slots passing the new slots' consistent point (are the old relays running?)", async () => {
    const old = await confirmed(oldSlots);
    return old.every((s) => s.lsn >= consistentPoint) ? old : null;
  });
  onStep({ step: 'old-past-new', oldConfirmed: oldPast.map((s) => Lsn.format(s.lsn)) });

  // 3. The operator stops the old relays and starts the new ones; the old slots' last position is read once they are idle.
  onStep({
    step: 'stop-old-start-new',
    stop: oldSlots,
    start: allShards(config.to).map((s) => `outbox-tail run --slot ${config.toSlot} --publication ${config.toPublication} --shard ${s.index}/${s.count}`),
  });
  const stopped = await poll('the old relays stopping (their slots inactive)', async () => {
    const old = await confirmed(oldSlots);
    return old.every((s) => !s.active) ? old : null;
  });
  const oldLast = stopped.reduce<bigint>((max, s) => (s.lsn > max ? s.lsn : max), 0n);

  // 4. Every new slot past the old ones' last position, then the old slots and publications go.
  const newPast = await poll("the new slots passing the old slots' last confirmed position (are the new relays running?)", async () => {
    const fresh = await confirmed(newSlots);
    return fresh.every((s) => s.lsn >= oldLast) ? fresh : null;
  });
  onStep({ step: 'new-past-old', oldLastConfirmed: Lsn.format(Lsn.of(oldLast)), newConfirmed: newPast.map((s) => Lsn.format(s.lsn)) });
  // An old relay started again after step 3 (a supervisor's restart policy) would publish beside the new set and break
  // per-key order; the drop would fail on it half way, so it is refused before anything is dropped.
  const restarted = (await confirmed(oldSlots)).filter((s) => s.active).map((s) => s.name);
  if (restarted.length > 0) throw oldRelayRestarted(restarted);
  for (const slot of oldSlots) {
    try {
      await dropSlot(client, slot);
    } catch (error) {
      if ((error as { code?: string }).code === '55006') throw oldRelayRestarted([slot]);
      throw error;
    }
  }
  for (const publication of oldPublications) await client.query(`drop publication if exists ${pg.escapeIdentifier(publication)}`);
  onStep({ step: 'dropped', slots: oldSlots, publications: oldPublications });
  return {
    from: config.from,
    to: config.to,
    consistentPoint: Lsn.format(Lsn.of(consistentPoint)),
    oldLastConfirmed: Lsn.format(Lsn.of(oldLast)),
    overlapBytes: Number(oldLast > consistentPoint ? oldLast - consistentPoint : 0n),
    dropped: [...oldSlots, ...oldPublications],
  };
}
