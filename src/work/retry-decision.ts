// The one retry rule of every work queue (processor events, mapping posts, document sends): after a failed
// attempt, should the item wait out a dependency's incident or planned downtime, be tried again at a later time,
// or be given up? An incident spends no budget, nor does anything that fails during a planned downtime, nor a
// call the dependency pushed back on (429, or 503 with Retry-After: it asked for time, and gets it); a failure that
// can pass is retried with capped backoff (or after a longer Retry-After) until the attempts run out; anything
// else is given up at once.
import type { Clock } from '../clock.ts';
import { describeError, isIncident, isRetryable } from '../errors.ts';
import { backoffDelay, type BackoffSettings } from './backoff.ts';
import type { IncidentGate } from './incident-gate.ts';

export interface RetryBudget {
  /** Attempts before a failure that can pass is given up; Infinity: never. */
  maxAttempts: number;
  backoff: BackoffSettings;
}

/** The failure, described for logs and stored reasons (never a payload). */
export interface Failure {
  type: string;
  code?: string;
  message: string;
  /** `code: message` (the class when there is no code), as stored in last_error. */
  reason: string;
}

export type RetryDecision =
  /**
   * A dependency refuses all work, or is in planned downtime: wait until the gate lets a probe through (the
   * downtime's end); the attempt is not counted.
   */
  | { kind: 'incident-wait'; at: number; failure: Failure }
  | { kind: 'retry-at'; at: number; failure: Failure }
  /**
   * The dependency pushed back on this call (an error with `pushedBack`): try again once the wait it asked for has
   * passed (up to a quarter more, at random, so the calls it turned away do not all come back at once); the
   * attempt is not counted.
   */
  | { kind: 'asked-to-wait'; at: number; failure: Failure }
  /** Final. `exhausted`: the failure could have passed, but the attempts ran out. */
  | { kind: 'give-up'; exhausted: boolean; failure: Failure };

export interface RetryPolicy {
  /**
   * What to do after attempt number `attempt` (1 for the first) failed with `err`. `retryAfterMs`: the
   * other side's own hint (Retry-After); the wait is never shorter.
   */
  decide(err: unknown, attempt: number, retryAfterMs?: number): RetryDecision;
}

export function describeFailure(err: unknown): Failure {
  const d = describeError(err);
  return { ...d, reason: `${d.code ?? d.type}: ${d.message}` };
}

/** When no Retry-After came with a push-back. */
const PUSHBACK_WAIT_DEFAULT_MS = 1_000;

const isPushBack = (err: unknown): boolean => (err as { pushedBack?: unknown } | null)?.pushedBack === true;

/**
 * `gate`: where the work waits out incidents of its dependency (and reports them). Without one, an
 * incident error is judged like any other failure (calls to the service never raise one).
 */
export function createRetryPolicy(deps: { clock: Clock; budget: RetryBudget; random: () => number; gate?: IncidentGate }): RetryPolicy {
  const { clock, budget, random, gate } = deps;
  return {
    decide(err, attempt, retryAfterMs = 0) {
      const failure = describeFailure(err);
      // The dependency is down on purpose: whatever it answered (it may have gone down during the call), the
      // work waits for the downtime's end, spending nothing and parking nothing.
      const planned = gate?.plannedUntil?.();
      if (planned !== undefined) return { kind: 'incident-wait', at: planned, failure };
      if (gate && isIncident(err)) {
        gate.failed();
        return { kind: 'incident-wait', at: gate.reopensAt(), failure };
      }
      if (isPushBack(err)) {
        const wait = retryAfterMs > 0 ? retryAfterMs : PUSHBACK_WAIT_DEFAULT_MS;
        return { kind: 'asked-to-wait', at: clock.now() + Math.round(wait * (1 + random() / 4)), failure };
      }
      if (!isRetryable(err)) return { kind: 'give-up', exhausted: false, failure };
      if (attempt >= budget.maxAttempts) return { kind: 'give-up', exhausted: true, failure };
      return { kind: 'retry-at', at: clock.now() + Math.max(backoffDelay(attempt, budget.backoff, random), retryAfterMs), failure };
    },
  };
}
