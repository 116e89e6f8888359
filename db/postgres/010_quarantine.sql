-- The quarantine (db/sqlite/018_quarantine.sql, src/storage/quarantine.ts): a correctly signed webhook over
-- WEBHOOK_MAX_BODY_BYTES, kept instead of refused until an operator applies or dismisses it. One row per eventId;
-- the body sealed at rest, NULL once applied or dismissed (the row stays). Shared by every replica: admissions
-- take a transaction-scoped advisory lock, so that two replicas cannot both fill the last room of the quarantine.
CREATE TABLE webhook_quarantine (
  id                BIGSERIAL PRIMARY KEY,
  event_id          TEXT COLLATE "C" NOT NULL UNIQUE,
  event_type        TEXT   NOT NULL,
  headers           TEXT   NOT NULL,            -- JSON object of the X-Service-* headers as received
  size              BIGINT NOT NULL,            -- bytes of the body as received (what WEBHOOK_MAX_BODY_BYTES must reach)
  body              BYTEA,                      -- the raw bytes as signed, sealed; NULL once applied or dismissed
  received_at       BIGINT NOT NULL,            -- epoch ms
  state             TEXT   NOT NULL DEFAULT 'quarantined' CHECK (state IN ('quarantined', 'applied', 'dismissed')),
  applied_by        TEXT,
  applied_at        BIGINT,                     -- epoch ms
  dismissed_reason  TEXT,
  dismissed_by      TEXT,
  dismissed_at      BIGINT                      -- epoch ms
);
CREATE INDEX webhook_quarantine_state ON webhook_quarantine (state, id);
