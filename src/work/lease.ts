// The one lease rule of the work queues (processor events, document sends): an item is claimed by taking its
// lease until now + leaseMs, only if no live lease holds it, and the claim counts an attempt. An item whose
// lease ran out (its holder crashed or was killed) is claimable again; a live lease is never taken. Each
// engine expresses the claim in its own SQL inside src/storage: SQLite with createLeaseClaim
// (src/storage/sqlite/lease.ts); PostgreSQL with one UPDATE over rows picked FOR UPDATE SKIP LOCKED
// (src/storage/postgres/lease.ts, claimWithLease). At start a process takes over the leases that are no
// longer anybody's: with SQLite every one (one process owns the file), with PostgreSQL none (the other
// replicas are alive; a dead one's leases run out). Each store's releaseLeases() says which; this logs it.
//
// A claimed item starts its work only while at least half its lease is left (leaseLeftToStart): the config
// keeps every lease at least twice the longest call, so work started then ends before the lease runs out, and
// no other replica can claim the item and do it a second time meanwhile.
import type { Logger } from '../logger.ts';

/**
 * Takes over at once the leases a process that stopped was holding (`release` frees those its engine knows
 * to be orphaned and says how many), logging `message` when there were any. Returns how many.
 */
export function takeOverLeases(release: () => number, logger: Logger, message: string): number;
export function takeOverLeases(release: () => Promise<number>, logger: Logger, message: string): Promise<number>;
export function takeOverLeases(release: () => number | Promise<number>, logger: Logger, message: string): number | Promise<number> {
  const log = (released: number) => {
    if (released) logger.warn({ released }, message);
    return released;
  };
  const released = release();
  return typeof released === 'number' ? log(released) : released.then(log);
}

/** Whether an item leased until `leaseUntil` (for `leaseMs`) may start its work now: half its lease or more is left. */
export function leaseLeftToStart(leaseUntil: number, leaseMs: number, now: number): boolean {
  return leaseUntil - now >= leaseMs / 2;
}
