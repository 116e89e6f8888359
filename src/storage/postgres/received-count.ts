// What the console counts as received, in PostgreSQL: inbox rows by the minute of their received time, in
// inbox_minutes (db/postgres/012_inbox_minutes.sql), every replica's. Whatever writes inbox_events (the inbox's
// batch, a quarantined event applied) adds the rows it stored in the same statement, under the key of the backend
// that runs it: a backend runs one transaction at a time, so two replicas' commits never wait on one counter row.

/** A statement for a WITH clause: counts the rows of `stored` (a CTE returning the stored rows' received_at). */
export const countReceived = (stored: string): string => `
      INSERT INTO inbox_minutes (minute, backend, received)
      SELECT (received_at / 60000) * 60000, pg_backend_pid(), count(*) FROM ${stored} GROUP BY 1
      ON CONFLICT (minute, backend) DO UPDATE SET received = inbox_minutes.received + excluded.received`;
