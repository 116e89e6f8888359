-- What an operator can still tell of a document once its bytes are gone: outbox_documents.request (sealed, CONTRACT
-- section 7) becomes NULL when the document may no longer be sent, and these stay. Written with the request, at
-- enqueue and when a REJECTED document the EMR changed is queued again. NULL when the file came as a URL (its bytes
-- never passed through the adapter), for a document the checks refused, and for rows written before this migration.
ALTER TABLE outbox_documents ADD COLUMN document_size INTEGER;  -- bytes of the decoded file
ALTER TABLE outbox_documents ADD COLUMN document_sha256 TEXT;  -- SHA-256 of the decoded file, lowercase hex
