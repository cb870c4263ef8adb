-- outbox-tail: least-privilege PostgreSQL setup.
--
-- Run with psql as the OWNER of the outbox table (or a superuser), connected to
-- the application database, AFTER the outbox table exists (outbox-tail init or
-- migrations/0001_outbox.sql):
--
--   psql "$OWNER_URL" -v relay_password="$(cat relay-password)" -f docker/least-privilege.sql
--
-- Optional psql variables: relay_role (default outbox_tail), publication
-- (default outbox_tail), outbox_table (default public.outbox), slot (default:
-- none created here; the relay creates it with --create-slot or `outbox-tail init`).
--
-- The relay role gets LOGIN and REPLICATION and nothing else: it owns no object
-- and has no table privilege (pgoutput decodes the WAL with the catalog; the
-- relay reads only pg_replication_slots, pg_publication* and pg_attribute).
-- --heartbeat-interval-ms (off by default) also calls
-- pg_logical_emit_message(false, '<prefix>-heartbeat', '') on a normal
-- connection: EXECUTE on it is PUBLIC's by default, so no grant is needed; where
-- a policy revoked it, a superuser runs
--   GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) TO outbox_tail;           -- 15, 16
--   GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text, boolean) TO outbox_tail;  -- 17+
-- (this script checks and says so below). It writes WAL only, no table.
-- The publication is created here by the table owner, never by the relay.
-- pg_hba.conf needs a line for the application DATABASE (a logical replication
-- connection matches the database name, not the `replication` keyword), e.g.
--   hostssl  appdb  outbox_tail  10.0.0.0/8  scram-sha-256

\set ON_ERROR_STOP on
\if :{?relay_password}
\else
  \echo 'set the relay password: psql -v relay_password=... -f least-privilege.sql'
  \quit
\endif
\if :{?relay_role}
\else
  \set relay_role outbox_tail
\endif
\if :{?publication}
\else
  \set publication outbox_tail
\endif
\if :{?outbox_table}
\else
  \set outbox_table public.outbox
\endif

SET password_encryption = 'scram-sha-256';

SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'relay_role') AS create_role \gset
\if :create_role
  CREATE ROLE :"relay_role" WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD :'relay_password';
\else
  ALTER ROLE :"relay_role" WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD :'relay_password';
\endif

-- Connect to this database only (PUBLIC keeps CONNECT on new databases by default;
-- revoke it there if your policy is deny-by-default).
GRANT CONNECT ON DATABASE :"DBNAME" TO :"relay_role";
-- No ownership, no DML, no schema privileges beyond PUBLIC's.
REVOKE ALL ON TABLE :outbox_table FROM :"relay_role";
-- The one table the relay writes (migrations/0004): where it got to, for `outbox-tail recover` after a lost slot.
-- Without the grant the relay still runs and warns once; recover then needs --since.
SELECT to_regclass('outbox_tail_relay_position') IS NOT NULL AS has_position \gset
\if :has_position
  GRANT SELECT, INSERT, UPDATE ON TABLE outbox_tail_relay_position TO :"relay_role";
\endif

-- The publication, owned by the table owner: INSERTs only, so cleanup DELETEs are not streamed.
SELECT NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = :'publication') AS create_publication \gset
\if :create_publication
  CREATE PUBLICATION :"publication" FOR TABLE :outbox_table WITH (publish = 'insert');
\endif

\if :{?slot}
  SELECT NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = :'slot') AS create_slot \gset
  \if :create_slot
    SELECT pg_create_logical_replication_slot(:'slot', 'pgoutput');
  \endif
\endif

-- The heartbeat's one function (see the header).
-- By oid, not by signature: PostgreSQL 17 added a fourth argument (flush boolean default false), so the
-- three-argument signature no longer names a function there and a lookup by it would abort this script.
SELECT coalesce(bool_and(has_function_privilege(:'relay_role', p.oid, 'EXECUTE')), false) AS heartbeat_ok
  FROM pg_proc p
 WHERE p.proname = 'pg_logical_emit_message' AND p.proargtypes[2] = 'text'::regtype \gset
\if :heartbeat_ok
\else
  \echo 'note: the relay role may not execute pg_logical_emit_message(boolean, text, text[, boolean]): --heartbeat-interval-ms would fail; see the header'
\endif

\echo relay role :relay_role ready: LOGIN REPLICATION, owns nothing; publication :publication on :outbox_table

