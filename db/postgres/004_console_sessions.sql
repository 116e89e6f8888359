-- Operator console sessions (db/sqlite/013_console_sessions.sql in PostgreSQL's types), shared by every replica:
-- a balancer may send each page to any of them. Keyed by the SHA-256 of the cookie's token, never the token.
CREATE TABLE console_sessions (
  token_hash    TEXT COLLATE "C" PRIMARY KEY,
  actor_name    TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
  csrf          TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL,
  flash         TEXT
);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
