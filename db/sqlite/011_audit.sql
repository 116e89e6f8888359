-- The audit trail: every admin action through any door (API, CLI, console) and every failed sign-in, with
-- when, who (a credential's name), what, on which ids, from where and the outcome. Identifiers only: never a
-- name, phone, label, body, reason text or token. Kept RETENTION_AUDIT_DAYS (6 years by default), far longer
-- than events.

-- AUTOINCREMENT: ids are never reused once old rows are pruned, so a page's `before` stays meaningful.
CREATE TABLE audit_log (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  at            INTEGER NOT NULL,   -- epoch ms, from the injected clock
  actor         TEXT NOT NULL,      -- the credential's name; '-' for a sign-in that named none
  door          TEXT NOT NULL,      -- api | cli | console
  action        TEXT NOT NULL,      -- dead_letter.replay, document.retry, sign_in, ...
  targets       TEXT NOT NULL,      -- JSON array of the ids acted on
  from_address  TEXT NOT NULL,      -- the client's address as the adapter saw it
  outcome       TEXT NOT NULL       -- ok | denied | not_found | refused | failed
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_action ON audit_log (action, id);

-- One row per target of an entry, for the `target` filter.
CREATE TABLE audit_targets (
  audit_id  INTEGER NOT NULL REFERENCES audit_log (id) ON DELETE CASCADE,
  target    TEXT NOT NULL,
  PRIMARY KEY (target, audit_id)
);
CREATE INDEX audit_targets_entry ON audit_targets (audit_id);
