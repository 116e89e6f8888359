-- Events by the entity they are about, finished ones included (db/sqlite/014_processing_entity.sql): the event
-- search by serviceId reads it instead of every row kept for dedupe. Building it locks processing against writes
-- while it runs (the migration is one transaction): on a large table, run `migrate` in a quiet hour.
CREATE INDEX processing_entity ON processing (entity_key, inbox_id);
