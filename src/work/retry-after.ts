// The other side's own word on when to call again: a dependency that answers 429 or 503 with Retry-After
// (the service client's ServiceCallError carries it as retryAfterMs) is not called again sooner, whatever
// the backoff says. Every queue that calls such a dependency (document sends, mapping posts) reads it here
// and hands it to the retry rule (./retry-decision.ts), which waits the longer of the two. The EMR's FHIR client
// reads the header here too: a pushed-back call's failure carries the wait asked for.

/** An error that may carry the wait its dependency asked for, in ms. */
interface WithRetryAfter {
  retryAfterMs?: unknown;
}

/** The wait `err`'s dependency asked for (Retry-After), in ms; 0 when it asked for none. */
export function retryAfterOf(err: unknown): number {
  const ms = err instanceof Error ? (err as WithRetryAfter).retryAfterMs : undefined;
  return typeof ms === 'number' && ms > 0 ? ms : 0;
}

/** A Retry-After header's wait in ms (seconds, or an HTTP date read against `nowMs`); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
