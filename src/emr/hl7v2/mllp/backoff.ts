// How long the MLLP client waits after a failed connect before it tries again: doubling from baseMs up
// to maxMs, read on the injected clock, back to nothing once the peer answers.
import type { Clock } from '../../../clock.ts';
import { backoffCap } from '../../../work/backoff.ts';

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000 };

export interface Backoff {
  /** Milliseconds until the next connect may be tried; 0 when it may be tried now. */
  remainingMs(): number;
  /** A connect failed: wait longer before the next. Returns the wait. */
  failed(): number;
  succeeded(): void;
}

export function createBackoff(clock: Clock, policy: BackoffPolicy): Backoff {
  if (!(policy.baseMs > 0) || !(policy.maxMs >= policy.baseMs)) throw new RangeError('backoff needs 0 < baseMs <= maxMs');
  let failures = 0;
  let retryAt = 0;
  return {
    remainingMs: () => (failures === 0 ? 0 : Math.max(0, retryAt - clock.now())),
    failed: () => {
      const delay = backoffCap(failures + 1, policy);
      failures += 1;
      retryAt = clock.now() + delay;
      return delay;
    },
    succeeded: () => {
      failures = 0;
      retryAt = 0;
    },
  };
}
