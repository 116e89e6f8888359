// Retry delays: capped exponential backoff with jitter. Half the delay is fixed and half random, so
// retries spread out (no thundering herd when the EMR comes back) without ever retrying at once.

export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

/** Delay before attempt `attempt + 1`, after `attempt` failures (attempt >= 1). */
export function backoffDelay(attempt: number, s: BackoffSettings, random: () => number): number {
  const cap = Math.min(s.maxMs, s.baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(cap / 2 + random() * (cap / 2));
}
