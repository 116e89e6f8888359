-- The adapter's schema on PostgreSQL (DATABASE_URL): the final schema of db/sqlite/001-010 in PostgreSQL's
-- types, for several `serve` replicas sharing one database. Applied by `npx emr-bridge migrate`, never by serve.
--
-- Kept the same as SQLite's, so the two stores share their semantics:
-- - times the adapter computes with are epoch milliseconds in BIGINT (node-postgres reads BIGINT as a
--   number through src/storage/postgres/pool.ts); ISO 8601 texts stay TEXT;
-- - SQLite's 0/1 flags stay integers (emr_synced), BLOBs are BYTEA, JSON kept as text stays TEXT (the code
--   parses it; nothing queries inside it);
-- - text that is ordered or compared by range (keys, ISO times, ids in page cursors) is COLLATE "C": byte
--   order, as SQLite's BINARY, whatever the database's locale;
-- - the same unique constraints (they are what dedupes across replicas: ON CONFLICT DO NOTHING), the same
--   indexes, partial ones included.
--
-- ============================================================================================================
-- FOR THE PROCESSOR'S POSTGRESQL QUEUE: how intake works here (the one deliberate difference from SQLite).
--
-- SQLite's intake reads `inbox_events WHERE id > processor_cursor.last_inbox_id`. On PostgreSQL that loses
-- events: ids come from a sequence when a row is inserted, not when its transaction commits, so a receiver
-- transaction holding id 10 can commit after another holding id 11 has committed and been taken in, and a
-- cursor already at 11 would never see 10. So there is no processor_cursor here. Instead:
--
--   inbox_intake: one row per inbox row not yet taken in. The receiver inserts it in the same statement
--   (same transaction) as the inbox row; a duplicate eventId inserts neither:
--       WITH ins AS (INSERT INTO inbox_events (...) VALUES ... ON CONFLICT (event_id) DO NOTHING
--                    RETURNING id, event_id),
--            q AS (INSERT INTO inbox_intake (inbox_id) SELECT id FROM ins)
--       SELECT event_id FROM ins;
--
--   Intake (any replica, any number at once), in ONE transaction:
--       SELECT q.inbox_id, e.event_id, e.body
--         FROM inbox_intake q JOIN inbox_events e ON e.id = q.inbox_id
--        ORDER BY q.inbox_id LIMIT $limit
--          FOR UPDATE OF q SKIP LOCKED;              -- rows another replica is taking in are skipped
--       INSERT INTO processing (inbox_id, entity_key, state, last_error, finished_at) VALUES ...
--           ON CONFLICT (inbox_id) DO NOTHING;       -- pending, or dead when the body is not an event
--       DELETE FROM inbox_intake WHERE inbox_id = ANY($taken_ids);
--       COMMIT;
--   A row is visible to intake only once the receiver's transaction committed, and it stays in inbox_intake
--   until the transaction that turned it into a processing row committed: nothing is lost, nothing is taken
--   twice (a replica dying mid-intake rolls back; its rows are taken by the next intake).
--
--   Queue readings: depth = open processing rows + count(*) FROM inbox_intake; the oldest untaken is
--   min(received_at) over inbox_intake JOIN inbox_events.
--
-- Claiming (the processor's and the pusher's leases) follows the design: SELECT ... FOR UPDATE SKIP LOCKED
-- over due rows whose lease is NULL or ran out, then set lease_until, in one transaction.
-- ============================================================================================================

-- The inbox: every verified webhook, stored before it is acknowledged. One row per eventId.
CREATE TABLE inbox_events (
  id           BIGSERIAL PRIMARY KEY,
  event_id     TEXT COLLATE "C" NOT NULL UNIQUE,
  event_type   TEXT   NOT NULL,                -- from the body, else the header, else 'unknown'
  headers      TEXT   NOT NULL,                -- JSON object of the X-Service-* headers as received
  body         BYTEA,                          -- the raw bytes, exactly as signed; NULL once pruned by retention
  received_at  BIGINT NOT NULL                 -- epoch ms, from the injected clock
);

-- Inbox rows not yet taken in by the processor (see above). No foreign key: the row is written in the
-- inbox row's own statement, and a check per acknowledged webhook would only cost the receiver.
CREATE TABLE inbox_intake (
  inbox_id  BIGINT PRIMARY KEY
);

-- One row per inbox event once the processor has taken it in.
CREATE TABLE processing (
  inbox_id          BIGINT PRIMARY KEY REFERENCES inbox_events (id) ON DELETE CASCADE,
  entity_key        TEXT COLLATE "C",           -- 'appointment:<serviceId>', 'patient:<serviceId>', 'document:<externalId>'; NULL when unparseable
  state             TEXT    NOT NULL,           -- pending | retrying | applied | discarded_stale | dead | dismissed
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   BIGINT  NOT NULL DEFAULT 0, -- epoch ms
  lease_until       BIGINT,                     -- epoch ms; a worker holds the event until then
  last_error        TEXT,                       -- code and message only, never a payload
  finished_at       BIGINT,                     -- when it became applied, discarded_stale or dead
  dismissed_reason  TEXT,
  dismissed_by      TEXT,
  dismissed_at      BIGINT                      -- epoch ms
);
CREATE INDEX processing_open ON processing (entity_key, inbox_id) WHERE state IN ('pending', 'retrying');
CREATE INDEX processing_open_order ON processing (inbox_id) WHERE state IN ('pending', 'retrying');
CREATE INDEX processing_finished ON processing (finished_at) WHERE state IN ('applied', 'discarded_stale');
CREATE INDEX processing_dead ON processing (state) WHERE state = 'dead';
CREATE INDEX processing_dismissed ON processing (state) WHERE state = 'dismissed';

-- The newest snapshot applied per entity: an older occurredAt is discarded as stale.
CREATE TABLE entity_versions (
  entity_key     TEXT COLLATE "C" PRIMARY KEY,
  occurred_at    TEXT COLLATE "C" NOT NULL,    -- ISO 8601 UTC with milliseconds: compares as text (bytes)
  event_id       TEXT NOT NULL,
  snapshot_hash  TEXT                          -- digest of the last snapshot applied
);

-- The EMR record of each service entity. Unique, so a repeated claim finds the first record.
CREATE TABLE emr_mappings (
  entity_type  TEXT COLLATE "C" NOT NULL,      -- appointment | patient | doctor | location
  service_id   TEXT COLLATE "C" NOT NULL,
  emr_id       TEXT   NOT NULL,
  created_at   BIGINT NOT NULL,
  PRIMARY KEY (entity_type, service_id)
);

-- Mappings to post back to the service (PUT /integration/v1/mappings/...), retried until they succeed.
CREATE TABLE mapping_outbox (
  entity_type       TEXT COLLATE "C" NOT NULL,
  service_id        TEXT COLLATE "C" NOT NULL,
  external_id       TEXT    NOT NULL,
  state             TEXT    NOT NULL DEFAULT 'pending', -- pending | sent | dead | dismissed
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   BIGINT  NOT NULL DEFAULT 0,
  last_error        TEXT,
  updated_at        BIGINT  NOT NULL,
  dismissed_reason  TEXT,
  dismissed_by      TEXT,
  dismissed_at      BIGINT,
  created_at        BIGINT,                              -- when the mapping was queued
  PRIMARY KEY (entity_type, service_id)
);
CREATE INDEX mapping_outbox_due ON mapping_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX mapping_outbox_sent ON mapping_outbox (updated_at) WHERE state = 'sent';

-- The outbound pusher's durable outbox: one row per document externalId.
CREATE TABLE outbox_documents (
  external_id         TEXT COLLATE "C" PRIMARY KEY,
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
  next_attempt_at     BIGINT  NOT NULL DEFAULT 0,
  lease_until         BIGINT,
  next_poll_at        BIGINT,                    -- HELD: when to ask the service again
  emr_synced          INTEGER NOT NULL DEFAULT 1, -- 0 while the current state still has to reach the EMR
  created_at          BIGINT  NOT NULL,
  updated_at          BIGINT  NOT NULL,
  emr_patient_id      TEXT                       -- the EMR patient a document from the EMR was sent for
);
CREATE INDEX outbox_due ON outbox_documents (next_attempt_at) WHERE state = 'queued';
CREATE INDEX outbox_poll ON outbox_documents (next_poll_at) WHERE state = 'HELD';
CREATE INDEX outbox_unsynced ON outbox_documents (updated_at) WHERE emr_synced = 0;
CREATE INDEX outbox_state ON outbox_documents (state);
CREATE INDEX outbox_created ON outbox_documents (created_at, external_id);

-- How far the EMR scan has read (one replica scans at a time: an advisory lock, src/storage/coordination.ts).
CREATE TABLE pusher_watermark (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  watermark  TEXT
);
INSERT INTO pusher_watermark (id, watermark) VALUES (1, NULL);

-- document.delivered / document.failed events for documents this outbox never sent (kept for a person).
CREATE TABLE unmatched_document_events (
  event_id      TEXT COLLATE "C" PRIMARY KEY,
  external_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  occurred_at   TEXT NOT NULL
);

-- The inbox's write probe (readiness while the database cannot take writes). Never more than one row.
CREATE TABLE store_probe (
  id         BIGSERIAL PRIMARY KEY,
  probed_at  BIGINT NOT NULL,   -- epoch ms
  pad        BYTEA  NOT NULL    -- about one event's size, so the probe needs the room an event would
);
