// The lease rule of src/work/lease.ts in PostgreSQL: one statement picks the due rows whose lease is free or
// ran out, locking them FOR UPDATE SKIP LOCKED (rows another replica is claiming at this moment are passed
// over, never waited for), and takes their lease, counting an attempt. A row whose lease another replica took
// and committed meanwhile is re-checked by PostgreSQL after the lock (its lease is live now) and left out: a
// live lease is never taken.

export interface LeaseClaimShape {
  /** The table, aliased `t` in the statement. */
  table: string;
  /** Its key column. */
  key: string;
  /** What makes a row due besides a free lease, over `t`; $1 is now (epoch ms). */
  due: string;
  /** The order rows are claimed in, over `t`. */
  order: string;
  /** Tables joined to build the returned columns, with their join condition on `t` (e.g. the inbox row). */
  join?: { from: string; on: string };
  /** The columns returned, over `t` (and the joined tables): the claimed rows, their new attempts included. */
  returning: string;
}

/**
 * The claim statement for a table. Parameters: $1 now, $2 how many at most, $3 the lease's end. The rows come
 * back in no particular order.
 */
export function leaseClaimSql(s: LeaseClaimShape): string {
  return `
    WITH due AS (
      SELECT t.${s.key} FROM ${s.table} t
      WHERE (${s.due}) AND (t.lease_until IS NULL OR t.lease_until <= $1)
      ORDER BY ${s.order}
      LIMIT $2
      FOR UPDATE OF t SKIP LOCKED
    )
    UPDATE ${s.table} t SET lease_until = $3, attempts = t.attempts + 1
    FROM due${s.join ? `, ${s.join.from}` : ''}
    WHERE t.${s.key} = due.${s.key}${s.join ? ` AND ${s.join.on}` : ''}
    RETURNING ${s.returning}`;
}
