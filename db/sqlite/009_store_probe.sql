-- The inbox's write probe: while the store cannot take writes (disk full, read-only, locked), the adapter
-- commits one small row here every few seconds, so readiness turns ready again by itself once a real write
-- commits, even when no webhook comes (a load balancer has stopped sending). Never more than one row.
CREATE TABLE store_probe (
  id INTEGER PRIMARY KEY,
  probed_at INTEGER NOT NULL,   -- epoch ms
  pad BLOB NOT NULL             -- about one event's size, so the probe needs the room an event would
);
