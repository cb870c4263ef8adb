-- Where each slot's relay got to, kept outside the slot (src/checkpoint/position-recorder.ts):
-- the commit time of the last transaction behind the ack frontier, so every outbox row
-- committed before it is in Kafka. When the slot is lost, `outbox-tail recover` backfills
-- from the table starting there. Written by the relay every few seconds; one row per slot.
-- Idempotent: safe to run again.
create table if not exists outbox_tail_relay_position (
  slot text primary key,
  frontier_commit_time timestamptz not null,
  frontier_lsn pg_lsn not null,
  relay text not null,
  updated_at timestamptz not null default now()
);
