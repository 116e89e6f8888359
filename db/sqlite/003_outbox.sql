-- The outbound pusher's durable outbox: one row per document externalId, from the first check to its
-- final status and the write-back of that status to the EMR.
CREATE TABLE outbox_documents (
  external_id         TEXT PRIMARY KEY,
  document_type       TEXT    NOT NULL,          -- lab_report | prescription
  source              TEXT    NOT NULL,          -- emr | api | cli
  emr_document_id     TEXT,                      -- the EMR's document, for the status write-back (NULL: not from the EMR)
  emr_version         TEXT,
  request             TEXT,                      -- the request body while it may still be sent; NULL afterwards
  state               TEXT    NOT NULL,          -- queued | SENT | HELD | FAILED | SUPPRESSED | REJECTED
  status_reason       TEXT,
  error_code          TEXT,                      -- the service's (or the local check's) error code
  service_id          TEXT,
  patient_service_id  TEXT,
  release_after       TEXT,
  sent_at             TEXT,
  attempts            INTEGER NOT NULL DEFAULT 0,
  next_attempt_at     INTEGER NOT NULL DEFAULT 0,
  lease_until         INTEGER,
  next_poll_at        INTEGER,                   -- HELD: when to ask the service again
  emr_synced          INTEGER NOT NULL DEFAULT 1, -- 0 while the current state still has to reach the EMR
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL
);
CREATE INDEX outbox_due ON outbox_documents (next_attempt_at) WHERE state = 'queued';
CREATE INDEX outbox_poll ON outbox_documents (next_poll_at) WHERE state = 'HELD';
CREATE INDEX outbox_unsynced ON outbox_documents (updated_at) WHERE emr_synced = 0;
CREATE INDEX outbox_state ON outbox_documents (state);

-- How far the EMR scan has read.
CREATE TABLE pusher_watermark (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  watermark  TEXT
);
INSERT INTO pusher_watermark (id, watermark) VALUES (1, NULL);

-- document.delivered / document.failed events for documents this outbox never sent (kept for a person).
CREATE TABLE unmatched_document_events (
  event_id      TEXT PRIMARY KEY,
  external_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  occurred_at   TEXT NOT NULL
);
