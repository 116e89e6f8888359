-- The trace context of the span that wrote a row (its W3C traceparent, docs/operations.md#traces), so the work on
-- that row joins the same trace after a restart and in another replica alike (src/tracing/spans.ts). NULL while
-- tracing is off (no OTEL_EXPORTER_OTLP_ENDPOINT), and for rows written before this migration: their work then
-- starts a trace of its own.
ALTER TABLE inbox_events ADD COLUMN trace_context TEXT;      -- the webhook's receipt; the processing is its child
ALTER TABLE mapping_outbox ADD COLUMN trace_context TEXT;    -- the processing that claimed the mapping; the post is its child
ALTER TABLE outbox_documents ADD COLUMN trace_context TEXT;  -- the document's filing; its send, follow-ups and write-back are its children
