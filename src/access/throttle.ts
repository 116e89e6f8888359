// Slows repeated failed sign-ins from one address, in memory: the first few failures cost nothing, then each
// further one makes the address wait twice as long as the last (1 s, 2 s, 4 s … up to 15 minutes) before
// any sign-in from it is heard again, right token or not (otherwise the wait would say when a guess was
// right). A success clears the address; one quiet for `forgetAfterMs` is forgotten. The admin API's bearer
// check and the console's sign-in form share one throttle, so a guess costs the same through either.
import type { Clock } from '../clock.ts';

export interface ThrottleSettings {
  /** Failures from an address before any wait. */
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** An address with no failure for this long starts afresh. */
  forgetAfterMs: number;
  /** Addresses remembered at most (the oldest is forgotten first), so a flood of addresses cannot grow memory. */
  maxAddresses: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = {
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxAddresses: 10_000,
};

export interface SignInThrottle {
  /** Milliseconds before a sign-in from `address` is heard again; 0: now. */
  waitMs(address: string): number;
  /** A failed sign-in from `address`; returns the wait it now has (0 while failures are still free). */
  failed(address: string): number;
  /** A sign-in that succeeded: the address starts afresh. */
  succeeded(address: string): void;
}

interface AddressRecord {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

export function createSignInThrottle(deps: { clock: Clock; settings?: Partial<ThrottleSettings> }): SignInThrottle {
  const s = { ...DEFAULT_THROTTLE, ...deps.settings };
  // A Map keeps insertion order: re-inserting on each failure keeps the least recent first, for eviction.
  const records = new Map<string, AddressRecord>();
  const current = (address: string): AddressRecord | undefined => {
    const r = records.get(address);
    if (r && deps.clock.now() - r.lastFailureAt >= s.forgetAfterMs && deps.clock.now() >= r.blockedUntil) {
      records.delete(address);
      return undefined;
    }
    return r;
  };
  return {
    waitMs(address) {
      const r = current(address);
      return r ? Math.max(0, r.blockedUntil - deps.clock.now()) : 0;
    },
    failed(address) {
      const now = deps.clock.now();
      const r = current(address) ?? { failures: 0, lastFailureAt: now, blockedUntil: 0 };
      r.failures += 1;
      r.lastFailureAt = now;
      const over = r.failures - s.freeFailures;
      const delay = over > 0 ? Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** Math.min(over - 1, 30)) : 0;
      r.blockedUntil = now + delay;
      records.delete(address);
      records.set(address, r);
      while (records.size > s.maxAddresses) records.delete(records.keys().next().value!);
      return delay;
    },
    succeeded(address) {
      records.delete(address);
    },
  };
}
