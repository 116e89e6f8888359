-- What an operator can still tell of a document once its bytes are gone (db/sqlite/016_document_digest.sql):
-- outbox_documents.request (sealed, CONTRACT section 7) becomes NULL when the document may no longer be sent, and
-- these stay. NULL when the file came as a URL, for a document the checks refused, and for rows written before this
-- migration. Adding columns without a default rewrites no row: instant on a large table.
ALTER TABLE outbox_documents ADD COLUMN document_size BIGINT;  -- bytes of the decoded file
ALTER TABLE outbox_documents ADD COLUMN document_sha256 TEXT;  -- SHA-256 of the decoded file, lowercase hex
