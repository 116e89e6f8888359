// Failed sign-ins per address, for the sign-in throttle (src/access/throttle.ts decides the waits; this keeps
// the counts). With several replicas the counts are shared (PostgreSQL: a guess costs the same whichever
// replica hears it); one process owning its SQLite file keeps them in memory (../sqlite/open-storage.ts), as
// any single process may: a restart forgets them, as before.

/** An address's failures: how many, the last one's time, and until when it waits. */
export interface FailureRecord {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

export interface SignInFailureStore {
  /** The address's record, if it has one. */
  get(address: string): Promise<FailureRecord | undefined>;
  /**
   * Counts one more failure: `next` turns the address's record (undefined: none) into the new one, with no other
   * failure of that address counted in between. Records quiet since `forgetBefore` (and no longer waiting at
   * `now`) may be dropped on the way.
   */
  fail(address: string, next: (current: FailureRecord | undefined) => FailureRecord, at: { now: number; forgetBefore: number }): Promise<FailureRecord>;
  /** The address starts afresh (a sign-in succeeded). */
  clear(address: string): Promise<void>;
}

/** Addresses the in-memory counts keep at most. */
export const MEMORY_MAX_ADDRESSES = 10_000;

/**
 * In memory, for one process: at most `maxAddresses` addresses, the least recently failed forgotten first, so a
 * flood of addresses cannot grow memory.
 */
export function createMemorySignInFailures(opts: { maxAddresses?: number } = {}): SignInFailureStore {
  const maxAddresses = opts.maxAddresses ?? MEMORY_MAX_ADDRESSES;
  // A Map keeps insertion order: re-inserting on each failure keeps the least recent first, for eviction.
  const records = new Map<string, FailureRecord>();
  return {
    get: async (address) => records.get(address),
    async fail(address, next) {
      const r = next(records.get(address));
      records.delete(address);
      records.set(address, r);
      while (records.size > maxAddresses) records.delete(records.keys().next().value!);
      return r;
    },
    clear: async (address) => void records.delete(address),
  };
}
