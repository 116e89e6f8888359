// The one lease rule of the work queues (processor events, document sends): an item is claimed by taking its
// lease until now + leaseMs, only if no live lease holds it, and the claim counts an attempt. An item whose
// lease ran out (its holder crashed or was killed) is claimable again; a live lease is never taken. Each
// engine expresses the claim in its own SQL inside src/storage: SQLite with createLeaseClaim
// (src/storage/sqlite/lease.ts); PostgreSQL with one UPDATE over rows picked FOR UPDATE SKIP LOCKED
// (src/storage/postgres/lease.ts, claimWithLease). At start a process takes over the leases that are no
// longer anybody's: with SQLite every one (one process owns the file), with PostgreSQL none (the other
// replicas are alive; a dead one's leases run out). Each store's releaseLeases() says which; this logs it.
//
// For the pusher: createLeaseClaim, LeaseStatements and Claim moved to src/storage/sqlite/lease.ts (the SQLite
// form); the PostgreSQL form is leaseClaimSql in src/storage/postgres/lease.ts. takeOverLeases also takes a
// release that returns a Promise (then it returns one too).
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
