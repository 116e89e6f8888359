-- Operator console sessions, in the database so that any process serving the file knows them and a restart signs
-- nobody out. Keyed by the SHA-256 of the cookie's random token: the database never holds a token that opens a
-- session. The credential's name and role are those at sign-in; `flash` is the one-time message of the next page.
CREATE TABLE console_sessions (
  token_hash    TEXT PRIMARY KEY,
  actor_name    TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
  csrf          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL,
  flash         TEXT
);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
