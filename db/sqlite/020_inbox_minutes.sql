-- What the receiver acknowledged, per minute: the console's "received" (overview, chart, GET /admin/stats/minutes)
-- counts inbox rows by their received time, not the processing rows the processor has taken in so far. The
-- inbox writes its batch's counts here in the batch's own transaction (src/storage/sqlite/inbox.ts): one upsert per
-- group commit, not a second B-tree entry per webhook as an index on inbox_events.received_at would be (dropped by
-- 005 for the receiver's speed). Exact: a row and its count commit together. Rows older than the event ids'
-- retention go with the events' pass (src/storage/sqlite/retention.ts).
CREATE TABLE inbox_minutes (
  minute    INTEGER PRIMARY KEY,  -- epoch ms of the minute's start (received_at rounded down)
  received  INTEGER NOT NULL      -- inbox rows stored with a received_at in that minute
);
-- The rows already stored count too (one pass over the inbox, once).
INSERT INTO inbox_minutes (minute, received)
  SELECT (received_at / 60000) * 60000, count(*) FROM inbox_events GROUP BY 1;

-- Mappings the service refused, counted for the console's overview and listed on its dead-letters page, without
-- reading every mapping kept until retention. Only parked rows are in it: nothing is added per mapping posted.
CREATE INDEX mapping_outbox_dead ON mapping_outbox (entity_type, service_id) WHERE state = 'dead';
