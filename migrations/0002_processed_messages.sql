-- Ids of outbox events a consumer group has applied (src/consumer/, idempotent consumer).
-- The consumer inserts (consumer_group, message_id) in the same transaction as the
-- handler's effects; a conflict means "already applied", so the record is skipped.
-- Idempotent: safe to run again.
create table if not exists processed_messages (
  consumer_group text not null,
  message_id text not null,
  processed_at timestamptz not null default now(),
  primary key (consumer_group, message_id)
);

-- pruneProcessedMessages() deletes by age.
create index if not exists processed_messages_processed_at_idx on processed_messages (processed_at);
