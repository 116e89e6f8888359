// Intake first: how many events the processor may have in flight now, so that the receiver's acknowledgments are
// never queued behind its work. The receiver and the processor share one event loop (and one SQLite connection):
// every event in flight is JavaScript that runs between two webhooks (its EMR answers parsed, its outcome
// committed), and with 32 in flight the acknowledgments waited hundreds of milliseconds behind them (issue 37).
//
// So the limit follows the event loop's delay, as the EMR's limit follows the EMR's latency (./adaptive-limit.ts):
// a window in which the loop ran late by more than `targetDelayMs` while webhooks queued (on average at least
// `pressure` of them in flight, received and not yet answered) halves it, down to `min` so that a backlog still
// moves; any other window gives one back. Both conditions, because each alone misleads: the receiver's own commit
// fsyncs on the loop, so a steady trickle of webhooks makes it late by a few milliseconds with nothing queued (and
// a processor held to one event then would crawl against a distant EMR); and webhooks in flight on a loop that is
// on time are not waiting for anyone. With no webhook for `quietMs` the processor has the whole `max` at once:
// once intake stops, a backlog drains at full pace.
// The delay is read from a source (a timer that notes how late it runs in `serve`; a test's numbers), a window at a
// time: tick() closes one.

export interface LoopDelaySource {
  /** The longest the event loop ran late (ms) since the last reading, and starts a new one. */
  takeMaxMs(): number;
}

export interface IntakePriority {
  /** The processor's events in flight allowed now (min … max). */
  limit(): number;
  /** A webhook arrived (the receiver calls it for every request); call what it returns once it is answered. */
  webhook(): () => void;
  /** Closes a window: reads the loop's delay over it and moves the limit. */
  tick(): void;
  /** Windows in which the limit was lowered, so far (a counter). */
  lowered(): number;
  readonly max: number;
}

export interface IntakePriorityOptions {
  max: number;
  /** Never fewer in flight than this: a backlog moves even while intake never stops. */
  min?: number;
  /** A window's delay above this lowers the limit (while webhooks queue). */
  targetDelayMs?: number;
  /** Webhooks in flight on average over a window, at least, for it to count as queueing. */
  pressure?: number;
  /** No webhook for this long: the whole max. */
  quietMs?: number;
  delays: LoopDelaySource;
  /** Real time (ms): when the last webhook came, against the windows (performance.now in `serve`). */
  now: () => number;
}

export const INTAKE_PRIORITY_DEFAULTS = {
  min: 1,
  /** A fifth of the acknowledgment budget (25 ms at p99): an event's turn never holds a webhook for longer. */
  targetDelayMs: 5,
  /** Two: one at a time is a trickle however late the loop; wrk's 50 connections, or the service's parallel retries, are not. */
  pressure: 2,
  quietMs: 500,
  /** How often `serve` closes a window. */
  windowMs: 50,
} as const;

export function createIntakePriority(opts: IntakePriorityOptions): IntakePriority {
  const { max, delays, now } = opts;
  const min = Math.min(max, opts.min ?? INTAKE_PRIORITY_DEFAULTS.min);
  const target = opts.targetDelayMs ?? INTAKE_PRIORITY_DEFAULTS.targetDelayMs;
  const quietMs = opts.quietMs ?? INTAKE_PRIORITY_DEFAULTS.quietMs;
  const pressure = opts.pressure ?? INTAKE_PRIORITY_DEFAULTS.pressure;
  let current = max;
  let lastWebhook = Number.NEGATIVE_INFINITY;
  let lowered = 0;
  const queue = createInFlightMean(now);

  return {
    max,
    limit: () => current,
    webhook() {
      lastWebhook = now();
      return queue.enter();
    },
    tick() {
      const late = delays.takeMaxMs();
      const queued = queue.takeMean() >= pressure;
      if (now() - lastWebhook >= quietMs) current = max;
      else if (late > target && queued) {
        current = Math.max(min, Math.floor(current / 2));
        lowered++;
      } else current = Math.min(max, current + 1);
    },
    lowered: () => lowered,
  };
}

/** Webhooks in flight, averaged over time since the last reading (Little's law: arrivals a second x time to answer). */
function createInFlightMean(now: () => number) {
  let inFlight = 0;
  let area = 0;
  let since = now();
  let lastChange = since;
  const account = () => {
    const t = now();
    area += inFlight * (t - lastChange);
    lastChange = t;
  };
  return {
    enter(): () => void {
      account();
      inFlight++;
      let answered = false;
      return () => {
        if (answered) return;
        answered = true;
        account();
        inFlight--;
      };
    },
    takeMean(): number {
      account();
      const span = lastChange - since;
      const mean = span > 0 ? area / span : inFlight;
      area = 0;
      since = lastChange;
      return mean;
    },
  };
}

/**
 * Reads the event loop's delay with a timer of its own: due every `intervalMs`, it notes how late it ran. (Node's
 * monitorEventLoopDelay histogram was tried first: on Node 24 it did not see a 60 ms turn of synchronous work.)
 */
export function timerLoopDelay(intervalMs = 5): LoopDelaySource & { stop(): void } {
  let max = 0;
  let due = performance.now() + intervalMs;
  let timer: NodeJS.Timeout | undefined;
  const probe = () => {
    const now = performance.now();
    max = Math.max(max, now - due);
    due = now + intervalMs;
    timer = setTimeout(probe, intervalMs);
    timer.unref();
  };
  timer = setTimeout(probe, intervalMs);
  timer.unref();
  return {
    takeMaxMs() {
      // A turn in progress since the last look counts too, so a window never reads as on time during one.
      const late = Math.max(max, performance.now() - due);
      max = 0;
      return Math.max(0, late);
    },
    stop: () => clearTimeout(timer),
  };
}

/** Closes a window every `windowMs` (real time) until the returned stop is called; never holds the process open. */
export function tickEvery(priority: Pick<IntakePriority, 'tick'>, windowMs: number = INTAKE_PRIORITY_DEFAULTS.windowMs): () => void {
  const timer = setInterval(() => priority.tick(), windowMs);
  timer.unref();
  return () => clearInterval(timer);
}
