-- The audit trail (db/sqlite/011_audit.sql in PostgreSQL's types): every admin action through any door and
-- every failed sign-in, identifiers only, kept RETENTION_AUDIT_DAYS (6 years by default).
CREATE TABLE audit_log (
  id            BIGSERIAL PRIMARY KEY,
  at            BIGINT NOT NULL,                -- epoch ms, from the injected clock
  actor         TEXT COLLATE "C" NOT NULL,      -- the credential's name; '-' for a sign-in that named none
  door          TEXT NOT NULL,                  -- api | cli | console
  action        TEXT COLLATE "C" NOT NULL,      -- dead_letter.replay, document.retry, sign_in, ...
  targets       TEXT NOT NULL,                  -- JSON array of the ids acted on
  from_address  TEXT NOT NULL,                  -- the client's address as the adapter saw it
  outcome       TEXT NOT NULL                   -- ok | denied | not_found | refused | failed
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_action ON audit_log (action, id);

-- One row per target of an entry, for the `target` filter.
CREATE TABLE audit_targets (
  audit_id  BIGINT NOT NULL REFERENCES audit_log (id) ON DELETE CASCADE,
  target    TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (target, audit_id)
);
CREATE INDEX audit_targets_entry ON audit_targets (audit_id);
