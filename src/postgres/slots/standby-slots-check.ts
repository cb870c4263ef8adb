import type pg from 'pg';
import type { Logger } from 'pino';
import { readSlot, readSlots } from './slot-catalog.js';

export interface StandbySlotsProblem {
  /** synchronized_standby_slots entries with no physical slot on this server. */
  missing: string[];
  setting: string;
}

/**
 * PostgreSQL 17+: a walsender of a failover slot sends nothing until every
 * physical slot named in synchronized_standby_slots has confirmed the WAL. A
 * name with no slot here (typical on a promoted standby, which inherits the old
 * primary's postgresql.auto.conf) holds the relay back for good while it looks
 * healthy. Returns the problem, or null (older servers, no failover slot, all present).
 */
export async function checkSynchronizedStandbySlots(client: pg.Client, slot: string): Promise<StandbySlotsProblem | null> {
  const setting = (await client.query<{ setting: string | null }>(`select current_setting('synchronized_standby_slots', true) as setting`)).rows[0]?.setting;
  if (!setting || (await readSlot(client, slot))?.failover !== true) return null;
  const names = setting
    .split(',')
    .map((n) => n.trim().replace(/^"(.*)"$/, '$1'))
    .filter((n) => n !== '' && n !== '*');
  if (names.length === 0) return null;
  const present = await readSlots(client, names);
  const missing = names.filter((n) => present.get(n)?.slotType !== 'physical');
  return missing.length > 0 ? { missing, setting } : null;
}

export async function warnOnMissingStandbySlots(client: pg.Client, slot: string, log: Logger): Promise<void> {
  const problem = await checkSynchronizedStandbySlots(client, slot);
  if (!problem) return;
  log.warn(
    { event: 'synchronized-standby-slots-missing', missing: problem.missing, setting: problem.setting },
    `synchronized_standby_slots = '${problem.setting}' names ${problem.missing.join(', ')}, which ${problem.missing.length > 1 ? 'are' : 'is'} not a physical slot on this server: PostgreSQL holds back every change of failover slot ${slot} until it exists and confirms. After a promotion, point synchronized_standby_slots at the new standby's slot or ALTER SYSTEM RESET synchronized_standby_slots; SELECT pg_reload_conf() (docs/operations.md, Failover slots)`,
  );
}
