-- The crosswalk (CONTRACT section 9): the EMR record of each service patient, doctor and location that the
-- adapter may not create, or that a person mapped. A row appears unmapped (emr_id NULL) as soon as an event needs
-- a record nobody has mapped, and takes its EMR id from an operator, an import, the service's snapshot
-- (externalId) or the EMR (found by the service's identifier). Written only by src/crosswalk/.
CREATE TABLE crosswalk (
  entity_type  TEXT    NOT NULL,   -- patient | doctor | location
  service_id   TEXT    NOT NULL,
  name         TEXT,               -- a doctor's or location's name as the service sent it; never a patient's (NULL)
  emr_id       TEXT,               -- NULL while unmapped
  source       TEXT,               -- operator | import | service | emr; NULL while unmapped
  needed_at    INTEGER,            -- epoch ms: when an event first needed it while unmapped
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (entity_type, service_id)
);
CREATE INDEX crosswalk_emr ON crosswalk (entity_type, emr_id) WHERE emr_id IS NOT NULL;

-- What each waiting event lacks: every record, in the order patient, doctor, location (ord). The event's
-- processing row is 'waiting' while it has rows here; a mapping takes them away and the event is due again.
CREATE TABLE crosswalk_waits (
  inbox_id     INTEGER NOT NULL REFERENCES processing (inbox_id) ON DELETE CASCADE,
  entity_type  TEXT    NOT NULL,
  service_id   TEXT    NOT NULL,
  ord          INTEGER NOT NULL,
  since        INTEGER NOT NULL,   -- epoch ms: when the event began to wait
  PRIMARY KEY (inbox_id, entity_type, service_id)
);
CREATE INDEX crosswalk_waits_record ON crosswalk_waits (entity_type, service_id);

-- A waiting event heads its entity like an open one (the entity's later events queue behind it) but is never
-- due: the head-of-entity search reads this index, the due walk keeps processing_open_order.
CREATE INDEX processing_unfinished ON processing (entity_key, inbox_id) WHERE state IN ('pending', 'retrying', 'waiting');
CREATE INDEX processing_waiting ON processing (inbox_id) WHERE state = 'waiting';
