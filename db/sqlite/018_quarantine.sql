-- The quarantine (src/storage/quarantine.ts): a correctly signed webhook over WEBHOOK_MAX_BODY_BYTES, kept instead
-- of refused so that the service stops retrying it, until an operator applies it (into the inbox, once the limit
-- has been raised) or dismisses it. One row per eventId. The body is patient data, sealed at rest for its row
-- (`webhook_quarantine/body/<eventId>`, src/storage/sealed-contexts.ts); it becomes NULL once the event is applied
-- or dismissed, and the row stays (identifiers, size, who and when) so that a late repeat is still known.
CREATE TABLE webhook_quarantine (
  id                INTEGER PRIMARY KEY,
  event_id          TEXT    NOT NULL UNIQUE,
  event_type        TEXT    NOT NULL,
  headers           TEXT    NOT NULL,           -- JSON object of the X-Service-* headers as received
  size              INTEGER NOT NULL,           -- bytes of the body as received (what WEBHOOK_MAX_BODY_BYTES must reach)
  body              BLOB,                       -- the raw bytes as signed, sealed; NULL once applied or dismissed
  received_at       INTEGER NOT NULL,           -- epoch ms
  state             TEXT    NOT NULL DEFAULT 'quarantined' CHECK (state IN ('quarantined', 'applied', 'dismissed')),
  applied_by        TEXT,
  applied_at        INTEGER,                    -- epoch ms
  dismissed_reason  TEXT,
  dismissed_by      TEXT,
  dismissed_at      INTEGER                     -- epoch ms
);
CREATE INDEX webhook_quarantine_state ON webhook_quarantine (state, id);
