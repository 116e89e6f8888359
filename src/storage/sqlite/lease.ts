// The lease rule of src/work/lease.ts in SQLite: due items are read and each one's lease taken (only if no
// live lease holds it, counting an attempt) in one immediate transaction; called inside a transaction of the
// caller's, it joins it (a savepoint), as the processor's batch commit does with its next claim.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';

export interface LeaseStatements<Row> {
  /** Up to `limit` items due at `now` whose lease is free. */
  due(now: number, limit: number): Row[];
  /** Takes the lease of `row` until `until` (and counts an attempt) if it is still free at `now`; true when taken. */
  take(row: Row, until: number, now: number): boolean;
}

/** Claims up to `limit` due items; each claimed row carries its new attempt count. */
export type Claim<Row> = (limit: number, leaseMs: number) => Row[];

export function createLeaseClaim<Row extends { attempts: number }>(db: Db, clock: Clock, statements: LeaseStatements<Row>): Claim<Row> {
  const claim = db.transaction((limit: number, leaseMs: number) => {
    const now = clock.now();
    return statements
      .due(now, limit)
      .filter((row) => statements.take(row, now + leaseMs, now))
      .map((row) => ({ ...row, attempts: row.attempts + 1 }));
  });
  return (limit, leaseMs) => claim.immediate(limit, leaseMs);
}
