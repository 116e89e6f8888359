-- The crosswalk and the events waiting for it (db/sqlite/021_crosswalk.sql says what each column is).
CREATE TABLE crosswalk (
  entity_type  TEXT COLLATE "C" NOT NULL,
  service_id   TEXT COLLATE "C" NOT NULL,
  name         TEXT,
  emr_id       TEXT,
  source       TEXT,
  needed_at    BIGINT,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (entity_type, service_id)
);
CREATE INDEX crosswalk_emr ON crosswalk (entity_type, emr_id) WHERE emr_id IS NOT NULL;

CREATE TABLE crosswalk_waits (
  inbox_id     BIGINT NOT NULL REFERENCES processing (inbox_id) ON DELETE CASCADE,
  entity_type  TEXT COLLATE "C" NOT NULL,
  service_id   TEXT COLLATE "C" NOT NULL,
  ord          INTEGER NOT NULL,
  since        BIGINT NOT NULL,
  PRIMARY KEY (inbox_id, entity_type, service_id)
);
CREATE INDEX crosswalk_waits_record ON crosswalk_waits (entity_type, service_id);

CREATE INDEX processing_unfinished ON processing (entity_key, inbox_id) WHERE state IN ('pending', 'retrying', 'waiting');
CREATE INDEX processing_waiting ON processing (inbox_id) WHERE state = 'waiting';
