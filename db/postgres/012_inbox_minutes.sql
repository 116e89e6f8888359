-- What the receiver acknowledged, per minute (db/sqlite/020_inbox_minutes.sql): the console's "received" counts
-- inbox rows by their received time, every replica's. The inbox's batch statement adds its counts here in the same
-- statement (src/storage/postgres/inbox.ts), under its own backend's key: two replicas' group commits never wait on
-- each other's row lock (a backend runs one transaction at a time), and a read sums the keys of each minute. One
-- upsert per batch; no second index entry per webhook.
CREATE TABLE inbox_minutes (
  minute    BIGINT  NOT NULL,  -- epoch ms of the minute's start (received_at rounded down)
  backend   INTEGER NOT NULL,  -- pg_backend_pid() of the transaction that counted (0: counted by this migration)
  received  BIGINT  NOT NULL,
  PRIMARY KEY (minute, backend)
);
INSERT INTO inbox_minutes (minute, backend, received)
  SELECT (received_at / 60000) * 60000, 0, count(*) FROM inbox_events GROUP BY 1;

-- Mappings the service refused, counted and listed by the console without reading every mapping kept.
CREATE INDEX mapping_outbox_dead ON mapping_outbox (entity_type, service_id) WHERE state = 'dead';
