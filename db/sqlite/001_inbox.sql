-- The inbox: every verified webhook, stored before it is acknowledged. One row per eventId.
-- The receiver only ever inserts; the processor (002) owns the processing state.
CREATE TABLE inbox_events (
  id           INTEGER PRIMARY KEY,
  event_id     TEXT    NOT NULL UNIQUE,
  event_type   TEXT    NOT NULL,           -- from the body, else the header, else 'unknown'
  headers      TEXT    NOT NULL,           -- JSON object of the X-Service-* headers as received
  body         BLOB,                       -- the raw bytes, exactly as signed; NULL once pruned by retention
  received_at  INTEGER NOT NULL            -- epoch ms, from the injected clock
);
CREATE INDEX inbox_events_received_at ON inbox_events (received_at);
