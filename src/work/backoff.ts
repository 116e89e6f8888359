// Retry delays: capped exponential backoff with jitter. Half the delay is fixed and half random, so
// retries spread out (no thundering herd when the EMR comes back) without ever retrying at once.

export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

/** The longest delay after `attempt` failures (attempt >= 1): baseMs doubling per failure, at most maxMs. */
export function backoffCap(attempt: number, s: BackoffSettings): number {
  return Math.min(s.maxMs, s.baseMs * 2 ** Math.min(attempt - 1, 30));
}

/** Delay before attempt `attempt + 1`, after `attempt` failures (attempt >= 1). */
export function backoffDelay(attempt: number, s: BackoffSettings, random: () => number): number {
  const cap = backoffCap(attempt, s);
  return Math.round(cap / 2 + random() * (cap / 2));
}
