-- outbox-tail 0003: outbox_tail.emit(), the table-less write path. It writes one
-- event as a transactional logical decoding message (pg_logical_emit_message),
-- so the event commits or rolls back with the caller's transaction and lives in
-- the WAL only: no heap row, no index entry, nothing to prune.
-- Content format v1 (README.md, "Message content format"; src/outbox/message-content.ts):
--   one line of JSON (the envelope), one LF byte, then the payload bytes.
-- The payload is jsonb here, so it reaches Kafka as jsonb's normalised text, the
-- same text the table path publishes; writeOutboxEvent(..., { via: 'message' })
-- sends a payload text unchanged instead.
-- The prefix is the setting outbox_tail.message_prefix when set (ALTER DATABASE
-- ... SET outbox_tail.message_prefix = '...'), else 'outbox-tail'; it must equal
-- the relay's --message-prefix.
-- Re-runnable: CREATE OR REPLACE.

CREATE SCHEMA IF NOT EXISTS outbox_tail;
-- Like the outbox table in public: any role that may write business rows may
-- write events. emit() runs with the caller's rights and only writes WAL
-- (pg_logical_emit_message is EXECUTE to PUBLIC); revoke and grant per role
-- if your policy is deny-by-default.
GRANT USAGE ON SCHEMA outbox_tail TO PUBLIC;

CREATE OR REPLACE FUNCTION outbox_tail.emit(
  aggregate_type text,
  aggregate_id   text,
  event_type     text,
  payload        jsonb,
  headers        jsonb DEFAULT NULL
) RETURNS uuid
LANGUAGE plpgsql
VOLATILE
AS $fn$
DECLARE
  event_id uuid := gen_random_uuid();
  prefix   text := coalesce(nullif(current_setting('outbox_tail.message_prefix', true), ''), 'outbox-tail');
BEGIN
  -- The same NOT NULL rules as the outbox table: refuse here, in the writer's
  -- transaction, rather than let the relay dead-letter or halt on it later.
  IF aggregate_type IS NULL OR aggregate_type = '' OR aggregate_id IS NULL OR aggregate_id = ''
     OR event_type IS NULL OR event_type = '' OR payload IS NULL THEN
    RAISE EXCEPTION 'outbox_tail.emit: aggregate_type, aggregate_id, event_type must be non-empty and payload non-null'
      USING ERRCODE = 'not_null_violation';
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) NOT IN ('object', 'null') THEN
    RAISE EXCEPTION 'outbox_tail.emit: headers must be a JSON object, got %', jsonb_typeof(headers)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- jsonb text output never contains a raw newline (newlines in strings are
  -- escaped), so the first LF ends the envelope.
  PERFORM pg_logical_emit_message(
    true,
    prefix,
    convert_to(
      jsonb_build_object(
        'v', 1,
        'id', event_id,
        'aggregate_type', aggregate_type,
        'aggregate_id', aggregate_id,
        'event_type', event_type,
        'headers', headers,
        'created_at', to_json(now())
      )::text || E'\n' || payload::text,
      'UTF8'
    )
  );
  RETURN event_id;
END
$fn$;
