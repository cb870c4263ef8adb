import { describe, expect, it } from 'vitest';
import { standbyDecodingVerdict, type StandbyFacts } from '../../../src/postgres/standby-decoding.js';

const ready: StandbyFacts = {
  serverVersionNum: 160010,
  hotStandbyFeedback: true,
  primarySlotName: 'standby1',
  receiverStatus: 'streaming',
  slot: null,
  syncReplicationSlots: false,
  failoverSlot: false,
};

describe('decoding on a hot standby', () => {
  it('decodes on a 16+ standby with feedback through a physical slot', () => {
    expect(standbyDecodingVerdict(ready)).toEqual({ kind: 'decode', warnings: [] });
    expect(standbyDecodingVerdict({ ...ready, slot: { synced: false } })).toEqual({ kind: 'decode', warnings: [] });
  });

  it('waits for promotion when the slot is a synchronized failover copy', () => {
    expect(standbyDecodingVerdict({ ...ready, serverVersionNum: 170004, slot: { synced: true } })).toMatchObject({ kind: 'wait-for-promotion' });
  });

  it('waits for promotion in a failover deployment: --failover-slot, or a slot-syncing standby without the copy yet', () => {
    expect(standbyDecodingVerdict({ ...ready, serverVersionNum: 170004, failoverSlot: true })).toMatchObject({ kind: 'wait-for-promotion' });
    expect(standbyDecodingVerdict({ ...ready, serverVersionNum: 170004, syncReplicationSlots: true })).toMatchObject({ kind: 'wait-for-promotion' });
    // A slot of its own on a slot-syncing standby: decoding there was asked for.
    expect(standbyDecodingVerdict({ ...ready, serverVersionNum: 170004, syncReplicationSlots: true, slot: { synced: false } })).toEqual({
      kind: 'decode',
      warnings: [],
    });
  });

  it('refuses before 16, naming the version', () => {
    expect(standbyDecodingVerdict({ ...ready, serverVersionNum: 150018 })).toMatchObject({ kind: 'refuse', reason: expect.stringContaining('PostgreSQL 16') });
  });

  it('refuses without hot_standby_feedback or a physical slot, with both fixes', () => {
    const verdict = standbyDecodingVerdict({ ...ready, hotStandbyFeedback: false, primarySlotName: '' });
    expect(verdict).toMatchObject({ kind: 'refuse', reason: expect.stringContaining('rows_removed') });
    if (verdict.kind !== 'refuse') throw new Error('unreachable');
    expect(verdict.reason).toContain('hot_standby_feedback is off');
    expect(verdict.reason).toContain('primary_slot_name is not set');
    expect(verdict.fix).toContain('ALTER SYSTEM SET hot_standby_feedback = on');
    expect(verdict.fix).toContain('pg_create_physical_replication_slot');
  });

  it('decodes but warns while the WAL receiver is not streaming', () => {
    expect(standbyDecodingVerdict({ ...ready, receiverStatus: null })).toEqual({
      kind: 'decode',
      warnings: ["the standby's WAL receiver is not running: nothing new reaches the slot until it streams"],
    });
  });
});
