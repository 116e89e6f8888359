-- Events by the entity they are about, finished ones included, newest last: what the event search by serviceId
-- (the console's "what happened to appointment X?") reads. processing_open holds only open events, so without
-- this the search read every row kept for dedupe (30 days of them). One more index entry per event taken in.
CREATE INDEX processing_entity ON processing (entity_key, inbox_id);
