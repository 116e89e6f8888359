-- The processor's state. The receiver only inserts into inbox_events; everything after that is here.

-- One row per inbox event once the processor has taken it in.
CREATE TABLE processing (
  inbox_id         INTEGER PRIMARY KEY REFERENCES inbox_events (id) ON DELETE CASCADE,
  entity_key       TEXT,                       -- 'appointment:<serviceId>', 'patient:<serviceId>', 'document:<externalId>'; NULL when unparseable
  state            TEXT    NOT NULL,           -- pending | retrying | applied | discarded_stale | dead
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL DEFAULT 0, -- epoch ms
  lease_until      INTEGER,                    -- epoch ms; a worker holds the event until then
  last_error       TEXT,                       -- code and message only, never a payload
  finished_at      INTEGER                     -- when it became applied, discarded_stale or dead
);
CREATE INDEX processing_open ON processing (entity_key, inbox_id) WHERE state IN ('pending', 'retrying');
CREATE INDEX processing_finished ON processing (finished_at) WHERE state IN ('applied', 'discarded_stale');
CREATE INDEX processing_dead ON processing (state) WHERE state = 'dead';

-- How far the processor has taken in the inbox.
CREATE TABLE processor_cursor (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  last_inbox_id  INTEGER NOT NULL
);
INSERT INTO processor_cursor (id, last_inbox_id) VALUES (1, 0);

-- The newest snapshot applied per entity: an older occurredAt is discarded as stale.
CREATE TABLE entity_versions (
  entity_key   TEXT PRIMARY KEY,
  occurred_at  TEXT NOT NULL,                  -- ISO 8601 UTC with milliseconds: compares as text
  event_id     TEXT NOT NULL
);

-- The EMR record of each service entity. Unique, so a repeated claim finds the first record.
CREATE TABLE emr_mappings (
  entity_type  TEXT    NOT NULL,               -- appointment | patient | doctor | location
  service_id   TEXT    NOT NULL,
  emr_id       TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (entity_type, service_id)
);

-- Mappings to post back to the service (PUT /integration/v1/mappings/...), retried until they succeed.
CREATE TABLE mapping_outbox (
  entity_type      TEXT    NOT NULL,
  service_id       TEXT    NOT NULL,
  external_id      TEXT    NOT NULL,
  state            TEXT    NOT NULL DEFAULT 'pending', -- pending | sent | dead
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT,
  updated_at       INTEGER NOT NULL,
  PRIMARY KEY (entity_type, service_id)
);
CREATE INDEX mapping_outbox_due ON mapping_outbox (next_attempt_at) WHERE state = 'pending';
