// The one lease rule of the work queues (processor events, document sends): an item is claimed by taking
// its lease until now + leaseMs, only if no live lease holds it, and the claim counts an attempt. An item
// whose lease ran out (its holder crashed) is claimable again; at start every lease is freed at once, since
// one adapter process owns a database and the holder is gone. Each store keeps its own SQL.
import type { Db } from '../database/open.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';

export interface LeaseStatements<Row> {
  /** Up to `limit` items due at `now` whose lease is free. */
  due(now: number, limit: number): Row[];
  /** Takes the lease of `row` until `until` (and counts an attempt) if it is still free at `now`; true when taken. */
  take(row: Row, until: number, now: number): boolean;
}

/** Claims up to `limit` due items in one immediate transaction; each claimed row carries its new attempt count. */
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

/**
 * Takes over at once the leases a process that stopped was holding (`release` frees them all and says how
 * many), logging `message` when there were any. Returns how many.
 */
export function takeOverLeases(release: () => number, logger: Logger, message: string): number {
  const released = release();
  if (released) logger.warn({ released }, message);
  return released;
}
