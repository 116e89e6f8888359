// How many calls to a dependency may be in flight at once, adapted to how it answers: additive increase,
// multiplicative decrease, as TCP's congestion window. The limit starts at the most allowed (EMR_MAX_CONCURRENCY)
// and never goes past it; a call the dependency pushed back on (429, or 503 with Retry-After) or a climb in its
// latency halves it, at most once per round of calls (the calls already in flight when it fell say nothing new)
// and, after a push-back, not again before the wait the dependency asked for has passed (its push-backs meanwhile
// are the same episode); each call answered in time then gives back a little, a whole call per `limit` answers. A caller over the limit
// waits in a queue, first come first served, holding nothing. The clock is the injected one: latency is read on it.
import type { Clock } from '../clock.ts';

export interface AdaptiveLimit {
  /**
   * Runs `call` once fewer than limit() are in flight; its latency and outcome feed the limit. `pushedBack` says
   * whether a failure was the dependency pushing back: false, or the wait it asked for in ms (0: none said).
   */
  run<T>(call: () => Promise<T>, pushedBack?: (err: unknown) => number | false): Promise<T>;
  /** Calls allowed in flight now (1 … max). */
  limit(): number;
  /** Calls in flight now. */
  inFlight(): number;
  /** Calls waiting for a slot now. */
  waiting(): number;
  /** The most ever allowed. */
  readonly max: number;
}

export interface AdaptiveLimitOptions {
  max: number;
  clock: Clock;
  /** Called with the new limit whenever it changes (a gauge). */
  onChange?: (limit: number) => void;
}

/** The share kept on a decrease (TCP Reno's one half). */
const DECREASE = 0.5;
/** A latency this many times the usual one, and at least LATENCY_CLIMB_MIN_MS above it, is a climb. */
const LATENCY_CLIMB_FACTOR = 3;
const LATENCY_CLIMB_MIN_MS = 100;
/** Smoothing of the recent latency (per answer) and of the usual one (slower, so a climb stands out). */
const RECENT_WEIGHT = 0.2;
const USUAL_WEIGHT = 0.02;

/** The latency seen: recent (fast average) against usual (slow average, only ever pulled down quickly). */
function createLatencyWatch() {
  let recent: number | undefined;
  let usual: number | undefined;
  return {
    /** Takes one answer's latency; true when recent latency has climbed well above the usual. */
    climbed(ms: number): boolean {
      recent = recent === undefined ? ms : recent + RECENT_WEIGHT * (ms - recent);
      usual = usual === undefined ? ms : Math.min(recent, usual + USUAL_WEIGHT * (ms - usual));
      return recent > usual * LATENCY_CLIMB_FACTOR && recent - usual >= LATENCY_CLIMB_MIN_MS;
    },
  };
}

export function createAdaptiveLimit(opts: AdaptiveLimitOptions): AdaptiveLimit {
  const { clock, max } = opts;
  let window = max;
  let running = 0;
  /** Answers since the last change, towards the next whole call of increase. */
  let credit = 0;
  /** Calls started since the last decrease: a decrease waits for a round of them. */
  let startedSinceDecrease = Number.POSITIVE_INFINITY;
  /** Before this (clock ms), a push-back belongs to the episode that lowered the limit last. */
  let episodeUntil = Number.NEGATIVE_INFINITY;
  const queue: (() => void)[] = [];
  const latency = createLatencyWatch();

  const limit = () => Math.max(1, Math.floor(window));
  function set(next: number): void {
    const before = limit();
    window = Math.min(max, Math.max(1, next));
    if (limit() !== before) opts.onChange?.(limit());
  }
  function decrease(waitMs = 0): void {
    const now = clock.now();
    if (startedSinceDecrease < limit() || now < episodeUntil) return;
    episodeUntil = now + waitMs;
    startedSinceDecrease = 0;
    credit = 0;
    set(window * DECREASE);
  }
  function increase(): void {
    if (window >= max) return;
    credit += 1;
    if (credit < limit()) return;
    credit = 0;
    set(window + 1);
  }
  function admitWaiting(): void {
    while (queue.length > 0 && running < limit()) {
      running++;
      queue.shift()!();
    }
  }
  function slot(): Promise<void> {
    if (running < limit() && queue.length === 0) {
      running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.push(resolve));
  }

  return {
    max,
    limit,
    inFlight: () => running,
    waiting: () => queue.length,
    async run(call, pushedBack) {
      await slot();
      startedSinceDecrease++;
      const started = clock.now();
      try {
        const result = await call();
        if (latency.climbed(clock.now() - started)) decrease();
        else increase();
        return result;
      } catch (err) {
        const wait = pushedBack?.(err) ?? false;
        if (wait !== false) decrease(wait);
        throw err;
      } finally {
        running--;
        admitWaiting();
      }
    },
  };
}
