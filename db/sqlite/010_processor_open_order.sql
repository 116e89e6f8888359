-- The processor's open events in inbox order, so finding each entity's next event reads only open rows:
-- without it the search walked processing from its first row, every applied and discarded one still
-- kept for dedupe included (30 days of them), once per claim.
CREATE INDEX processing_open_order ON processing (inbox_id) WHERE state IN ('pending', 'retrying');
