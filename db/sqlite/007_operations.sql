-- Operations: dismissed dead letters (kept, with who dismissed them, why and when), the time a mapping entered
-- the outbox (for the age of the oldest undelivered one), and indexes for the admin lists' pages and for
-- pruning finished outbox rows.

-- A dismissed dead letter is state 'dismissed': never replayed, never pruned, listed only when asked for.
ALTER TABLE processing ADD COLUMN dismissed_reason TEXT;
ALTER TABLE processing ADD COLUMN dismissed_by TEXT;
ALTER TABLE processing ADD COLUMN dismissed_at INTEGER;     -- epoch ms
CREATE INDEX processing_dismissed ON processing (state) WHERE state = 'dismissed';

-- mapping_outbox.state gains 'dismissed' the same way.
ALTER TABLE mapping_outbox ADD COLUMN dismissed_reason TEXT;
ALTER TABLE mapping_outbox ADD COLUMN dismissed_by TEXT;
ALTER TABLE mapping_outbox ADD COLUMN dismissed_at INTEGER;
-- When the mapping was queued (updated_at moves with every attempt). Rows from before: their last change.
ALTER TABLE mapping_outbox ADD COLUMN created_at INTEGER;
UPDATE mapping_outbox SET created_at = updated_at;
CREATE INDEX mapping_outbox_sent ON mapping_outbox (updated_at) WHERE state = 'sent';

-- The documents list pages newest first.
CREATE INDEX outbox_created ON outbox_documents (created_at, external_id);
