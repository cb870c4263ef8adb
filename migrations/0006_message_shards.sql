-- outbox-tail 0006: shards for the table-less write path (docs/sharding.md).
-- `outbox-tail init --shards N --source messages` records N for the message
-- prefix here; outbox_tail.emit() then writes each event with the prefix
-- '<prefix>_<i>', i = (hashtext(aggregate_id) & 2147483647) % N, the same
-- hash as the publications' row filters, so relay i (--shard i/N) takes only
-- its keys' messages. No row: one prefix, as before.
-- emit() keeps the trace-context arguments of 0005 (docs/tracing.md).
-- Idempotent: safe to run again.

DROP FUNCTION IF EXISTS outbox_tail.emit(text, text, text, jsonb, jsonb);

CREATE TABLE IF NOT EXISTS outbox_tail.message_shards (
  prefix text PRIMARY KEY,
  shards integer NOT NULL CHECK (shards >= 1)
);
GRANT SELECT ON outbox_tail.message_shards TO PUBLIC;

-- A key's shard: & 2147483647 rather than abs(), which overflows for hashtext() = -2^31.
CREATE OR REPLACE FUNCTION outbox_tail.shard_of(key text, shards integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT (hashtext(key) & 2147483647) % shards $$;

CREATE OR REPLACE FUNCTION outbox_tail.emit(
  aggregate_type text,
  aggregate_id   text,
  event_type     text,
  payload        jsonb,
  headers        jsonb DEFAULT NULL,
  traceparent    text  DEFAULT NULL,
  tracestate     text  DEFAULT NULL,
  baggage        text  DEFAULT NULL
) RETURNS uuid
LANGUAGE plpgsql
VOLATILE
AS $fn$
DECLARE
  event_id     uuid := gen_random_uuid();
  event_prefix text := coalesce(nullif(current_setting('outbox_tail.message_prefix', true), ''), 'outbox-tail');
  n            integer;
  trace        jsonb := jsonb_strip_nulls(jsonb_build_object('traceparent', traceparent, 'tracestate', tracestate, 'baggage', baggage));
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
  IF trace <> '{}'::jsonb THEN
    headers := CASE WHEN jsonb_typeof(headers) = 'object' THEN headers ELSE '{}'::jsonb END || trace;
  END IF;
  SELECT s.shards INTO n FROM outbox_tail.message_shards s WHERE s.prefix = event_prefix;
  IF n IS NOT NULL THEN
    event_prefix := event_prefix || '_' || outbox_tail.shard_of(aggregate_id, n);
  END IF;
  -- jsonb text output never contains a raw newline (newlines in strings are
  -- escaped), so the first LF ends the envelope.
  PERFORM pg_logical_emit_message(
    true,
    event_prefix,
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
