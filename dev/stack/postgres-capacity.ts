/**
 * Connection and slot capacity of every test server. Four test files at a time share one server and
 * each test may hold a relay slot, a witness slot and a standby's walsender; a standby (test/failover)
 * must have at least its primary's values, or it refuses hot standby and exits.
 * max_slot_wal_keep_size is bounded as in production (docker/docker-compose.yml: 2GB): a stuck slot
 * must not fill the disk, and `outbox-tail doctor` warns on an unbounded one (docs/doctor.md). 8GB is
 * far above what any test writes while a slot lags, so no test's slot is invalidated by it.
 */
export const POSTGRES_CAPACITY: Readonly<Record<string, string>> = {
  max_wal_senders: '64',
  max_replication_slots: '64',
  max_connections: '200',
  max_slot_wal_keep_size: '8GB',
};
