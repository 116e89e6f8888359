-- Failed sign-ins per address (the admin API's bearer check and the console's form), shared by every replica so
-- that a guess costs the same whichever replica hears it. PostgreSQL only: one process owning an SQLite file
-- keeps these counts in memory. Rows quiet for an hour are dropped as new failures come in.
CREATE TABLE sign_in_failures (
  address          TEXT COLLATE "C" PRIMARY KEY,
  failures         INTEGER NOT NULL,
  last_failure_at  BIGINT NOT NULL,
  blocked_until    BIGINT NOT NULL
);
