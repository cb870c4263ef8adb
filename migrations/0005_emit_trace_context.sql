-- outbox-tail 0005: outbox_tail.emit() takes the writer's W3C trace context
-- (traceparent, tracestate) and baggage, and puts them in the event's headers
-- under those names, where the relay copies them to the Kafka record unchanged
-- (docs/tracing.md). A NULL argument adds nothing; an argument given wins over
-- a same-named key in `headers`. Calls with the five arguments of 0003 keep
-- working (the new ones default to NULL).
-- The five-argument function of 0003 is dropped first: two overloads would make
-- every call with five or fewer arguments ambiguous.
-- Idempotent: safe to run again (also after re-running 0003).

DROP FUNCTION IF EXISTS outbox_tail.emit(text, text, text, jsonb, jsonb);

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
  event_id uuid := gen_random_uuid();
  prefix   text := coalesce(nullif(current_setting('outbox_tail.message_prefix', true), ''), 'outbox-tail');
  trace    jsonb := jsonb_strip_nulls(jsonb_build_object('traceparent', traceparent, 'tracestate', tracestate, 'baggage', baggage));
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
