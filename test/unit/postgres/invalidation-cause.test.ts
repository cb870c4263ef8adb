import { describe, expect, it } from 'vitest';
import { describeInvalidation, invalidationCause } from '../../../src/postgres/slots/invalidation-cause.js';

const none = { walStatus: 'reserved', invalidationReason: null, conflicting: null };

describe('invalidationCause', () => {
  it('says a slot with wal_status reserved/extended and no invalidation_reason is not invalidated', () => {
    expect(invalidationCause(none)).toBeNull();
    expect(invalidationCause({ ...none, walStatus: 'extended' })).toBeNull();
    expect(invalidationCause({ ...none, walStatus: 'unreserved', conflicting: false })).toBeNull();
  });

  it.each([
    ['wal_removed', /max_slot_wal_keep_size/],
    ['rows_removed', /hot_standby_feedback = on.*primary_slot_name/],
    ['wal_level_insufficient', /wal_level = logical/],
    ['idle_timeout', /idle_replication_slot_timeout = 0/],
  ])("names PostgreSQL 17+'s invalidation_reason %s and the setting to change", (reason, fix) => {
    const cause = invalidationCause({ walStatus: 'lost', invalidationReason: reason, conflicting: null });
    expect(cause).toMatchObject({ reason, source: 'invalidation_reason' });
    expect(cause!.fix).toMatch(fix);
  });

  it('reads wal_status = lost on PostgreSQL 15/16 as WAL removed past max_slot_wal_keep_size', () => {
    const cause = invalidationCause({ walStatus: 'lost', invalidationReason: null, conflicting: null });
    expect(cause).toMatchObject({ reason: 'wal_removed', source: 'wal_status' });
    expect(cause!.cause).toMatch(/max_slot_wal_keep_size/);
  });

  it("reads PostgreSQL 16's conflicting = true as rows removed, even when wal_status is lost", () => {
    expect(invalidationCause({ walStatus: 'lost', invalidationReason: null, conflicting: true })).toMatchObject({
      reason: 'rows_removed',
      source: 'conflicting',
    });
  });

  it('prefers invalidation_reason over wal_status, and keeps an unknown future reason by name', () => {
    expect(invalidationCause({ walStatus: 'lost', invalidationReason: 'idle_timeout', conflicting: false })?.reason).toBe('idle_timeout');
    const future = invalidationCause({ walStatus: 'lost', invalidationReason: 'something_new', conflicting: null });
    expect(future).toMatchObject({ reason: 'something_new', source: 'invalidation_reason' });
    expect(future!.fix).toContain('something_new');
  });

  it('describes the slot, the column read and the cause in one line', () => {
    const line = describeInvalidation('s1', invalidationCause({ walStatus: 'lost', invalidationReason: 'idle_timeout', conflicting: null })!);
    expect(line).toBe(
      'replication slot s1 is invalidated (invalidation_reason = idle_timeout, cause idle_timeout): the slot stayed inactive (no relay connected) longer than idle_replication_slot_timeout and was invalidated at a checkpoint',
    );
    expect(describeInvalidation('s1', invalidationCause({ walStatus: 'lost', invalidationReason: null, conflicting: null })!)).toContain(
      '(wal_status = lost, cause wal_removed)',
    );
  });
});
