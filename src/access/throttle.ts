// Slows repeated failed sign-ins from one address: the first few failures cost nothing, then each further one
// makes the address wait twice as long as the last (1 s, 2 s, 4 s … up to 15 minutes) before any sign-in from it
// is heard again, right token or not (otherwise the wait would say when a guess was right). A success clears the
// address; one quiet for `forgetAfterMs` is forgotten. The admin API's bearer check and the console's sign-in form
// share one throttle, so a guess costs the same through either; the counts are the storage's
// (src/storage/sign-in-failures.ts), so with several replicas a guess costs the same whichever replica hears it.
import type { Clock } from '../clock.ts';
import { createMemorySignInFailures, type FailureRecord, MEMORY_MAX_ADDRESSES, type SignInFailureStore } from '../storage/sign-in-failures.ts';

export interface ThrottleSettings {
  /** Failures from an address before any wait. */
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** An address with no failure for this long starts afresh. */
  forgetAfterMs: number;
  /** Addresses remembered at most by the in-memory counts (the oldest is forgotten first). */
  maxAddresses: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = {
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 60 * 60_000,
  maxAddresses: MEMORY_MAX_ADDRESSES,
};

export interface SignInThrottle {
  /** Milliseconds before a sign-in from `address` is heard again; 0: now. */
  waitMs(address: string): Promise<number>;
  /** A failed sign-in from `address`; returns the wait it now has (0 while failures are still free). */
  failed(address: string): Promise<number>;
  /** A sign-in that succeeded: the address starts afresh. */
  succeeded(address: string): Promise<void>;
}

export function createSignInThrottle(deps: { clock: Clock; settings?: Partial<ThrottleSettings>; store?: SignInFailureStore }): SignInThrottle {
  const s = { ...DEFAULT_THROTTLE, ...deps.settings };
  const store = deps.store ?? createMemorySignInFailures({ maxAddresses: s.maxAddresses });
  /** The record unless it is forgotten: quiet for forgetAfterMs and waiting no more. */
  const standing = (r: FailureRecord | undefined, now: number) => (r && (now - r.lastFailureAt < s.forgetAfterMs || now < r.blockedUntil) ? r : undefined);
  const delayAfter = (failures: number) => {
    const over = failures - s.freeFailures;
    return over > 0 ? Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** Math.min(over - 1, 30)) : 0;
  };
  return {
    async waitMs(address) {
      const now = deps.clock.now();
      const r = standing(await store.get(address), now);
      return r ? Math.max(0, r.blockedUntil - now) : 0;
    },
    async failed(address) {
      const now = deps.clock.now();
      const r = await store.fail(
        address,
        (current) => {
          const failures = (standing(current, now)?.failures ?? 0) + 1;
          return { failures, lastFailureAt: now, blockedUntil: now + delayAfter(failures) };
        },
        { now, forgetBefore: now - s.forgetAfterMs },
      );
      return r.blockedUntil - now;
    },
    succeeded: (address) => store.clear(address),
  };
}
