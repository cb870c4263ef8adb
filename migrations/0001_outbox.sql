-- outbox-tail 0001: the outbox table and the publication the relay reads.
-- Re-runnable: every statement is guarded, so applying it twice is a no-op.

CREATE TABLE IF NOT EXISTS outbox (
  id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  aggregate_type text        NOT NULL,
  aggregate_id   text        NOT NULL,
  event_type     text        NOT NULL,
  payload        jsonb       NOT NULL,
  headers        jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- INSERTs only: cleanup DELETEs on the outbox must not be streamed.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'outbox_tail') THEN
    CREATE PUBLICATION outbox_tail FOR TABLE outbox WITH (publish = 'insert');
  END IF;
END
$$;
