-- The console's history (db/sqlite/012_history.sql in PostgreSQL's types, with its reasons): every state change
-- of an event after it was received and of a document, written in the transaction of the change; what an
-- applied event did in the EMR; the indexes of the console's searches and per-minute counts. History rows go
-- with their event or document when retention prunes it.

CREATE TABLE event_history (
  id        BIGSERIAL PRIMARY KEY,
  inbox_id  BIGINT  NOT NULL,        -- the event's inbox row (no foreign key: retention deletes these itself)
  at        BIGINT  NOT NULL,        -- epoch ms
  state     TEXT    NOT NULL,
  attempt   INTEGER NOT NULL,
  reason    TEXT,
  emr_refs  TEXT                     -- applied: the FHIR references it wrote or claimed, space-separated
);
CREATE INDEX event_history_event ON event_history (inbox_id, id);

ALTER TABLE processing ADD COLUMN received_at BIGINT;
CREATE INDEX processing_received ON processing (received_at);
DROP INDEX processing_finished;
CREATE INDEX processing_finished ON processing (finished_at, state) WHERE state IN ('applied', 'discarded_stale');

CREATE TABLE document_history (
  id           BIGSERIAL PRIMARY KEY,
  external_id  TEXT COLLATE "C" NOT NULL,
  at           BIGINT  NOT NULL,     -- epoch ms
  status       TEXT    NOT NULL,
  attempt      INTEGER,
  detail       TEXT
);
CREATE INDEX document_history_document ON document_history (external_id, id);

CREATE INDEX emr_mappings_emr ON emr_mappings (emr_id);
