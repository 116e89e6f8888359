-- Nothing reads inbox_events by received_at (retention works from processing.finished_at), so its index
-- was only a second B-tree write on every acknowledged webhook.
DROP INDEX IF EXISTS inbox_events_received_at;
