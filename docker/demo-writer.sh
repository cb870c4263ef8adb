#!/bin/sh
# Demo writer for docker-compose.yml: an "order service" that writes orders and
# their outbox events in one transaction, a few per second, forever.
# Uses the libpq PG* variables (PGHOST, PGUSER, PGPASSWORD, PGDATABASE).
set -eu
rate_sleep="${WRITER_SLEEP:-0.5}"
psql -v ON_ERROR_STOP=1 -q <<'SQL'
CREATE TABLE IF NOT EXISTS orders (
  id         bigserial PRIMARY KEY,
  customer   text        NOT NULL,
  total      numeric     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
SQL
echo "demo writer: inserting an order every ${rate_sleep}s"
n=0
while true; do
  n=$((n + 1))
  psql -v ON_ERROR_STOP=1 -q <<SQL
BEGIN;
WITH o AS (
  INSERT INTO orders (customer, total) VALUES ('customer-' || (random() * 50)::int, round((random() * 200)::numeric, 2))
  RETURNING id, customer, total
)
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
SELECT 'order', o.id::text, 'OrderPlaced',
       jsonb_build_object('orderId', o.id, 'customer', o.customer, 'total', o.total, 'seq', $n),
       jsonb_build_object('source', 'demo-writer')
FROM o;
COMMIT;
SQL
  if [ $((n % 20)) -eq 0 ]; then echo "demo writer: $n orders"; fi
  sleep "$rate_sleep"
done
