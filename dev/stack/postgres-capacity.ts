/**
 * Connection and slot capacity of every test server. Four test files at a time share one server and
 * each test may hold a relay slot, a witness slot and a standby's walsender; a standby (test/failover)
 * must have at least its primary's values, or it refuses hot standby and exits.
 */
export const POSTGRES_CAPACITY: Readonly<Record<string, string>> = {
  max_wal_senders: '64',
  max_replication_slots: '64',
  max_connections: '200',
};
