-- A digest of the last snapshot applied per entity, so an unchanged patient inside each appointment event
-- costs no EMR write.
ALTER TABLE entity_versions ADD COLUMN snapshot_hash TEXT;
