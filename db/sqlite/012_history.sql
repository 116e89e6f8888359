-- What the operator console shows of each event and document: every state it went through, written in the
-- same transaction as the change itself (the processor's batch commit, intake, replay and dismissal; the
-- outbox's enqueue, sends, outcomes and retries), what an applied event did in the EMR, and the events
-- received and applied per minute. History rows go with their event or document when retention prunes it.
-- Identifiers, codes and reasons only, never bodies.
--
-- Kept cheap for the processor (measured with `npm run bench -- processor`): an event's received moment is its
-- inbox row's received_at (copied to its processing row at intake), not a history row; the per-minute counts
-- read two processing indexes (received_at, and processing_finished made covering); the FHIR references ride
-- on the applied history row, so processing rows stay small; no index on processing.entity_key (the search by
-- serviceId reads processing newest first): each of those cost the processor more than it gave.

-- One row per state change of an event after it was received: retrying, waiting (an EMR incident: the attempt
-- given back), applied, discarded_stale, dead, replayed, dismissed.
CREATE TABLE event_history (
  id        INTEGER PRIMARY KEY,
  inbox_id  INTEGER NOT NULL,        -- the event's inbox row (no foreign key: retention deletes these itself)
  at        INTEGER NOT NULL,        -- epoch ms
  state     TEXT    NOT NULL,
  attempt   INTEGER NOT NULL,        -- the attempt this change ended (0: none yet, or a fresh start)
  reason    TEXT,                    -- code and message only, never a payload
  emr_refs  TEXT                     -- applied: the FHIR references it wrote or claimed, space-separated (`Patient/12 Appointment/34`)
);
-- An event's history, in order (the rowid is the index's tail).
CREATE INDEX event_history_event ON event_history (inbox_id);

-- When the event was received (its inbox row's received_at), for the per-minute counts. NULL on rows taken in
-- before this migration.
ALTER TABLE processing ADD COLUMN received_at INTEGER;
CREATE INDEX processing_received ON processing (received_at);
-- Covering for the applied per minute (state beside finished_at); the same rows as before.
DROP INDEX processing_finished;
CREATE INDEX processing_finished ON processing (finished_at, state) WHERE state IN ('applied', 'discarded_stale');

-- One row per status change of a document: queued (or REJECTED) when it entered the outbox, retrying (a send
-- that failed, with its attempt and error code), the service's answers (HELD, SENT, FAILED, SUPPRESSED),
-- retried (a person sent it again), and the EMR's changes to a REJECTED one.
CREATE TABLE document_history (
  id           INTEGER PRIMARY KEY,
  external_id  TEXT    NOT NULL,
  at           INTEGER NOT NULL,     -- epoch ms
  status       TEXT    NOT NULL,
  attempt      INTEGER,              -- the send attempt, for a send's outcome
  detail       TEXT                  -- an error code, or the status reason
);
CREATE INDEX document_history_document ON document_history (external_id);

-- Mappings looked up by their EMR id (the console's mapping search, both directions).
CREATE INDEX emr_mappings_emr ON emr_mappings (emr_id);
