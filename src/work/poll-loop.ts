// The timing of background work (./worker.ts builds every worker on it): runs one pass, pauses, runs the next.
// A failed pass is logged and the loop goes on (failures in a row are counted: a worker whose every pass fails
// makes the adapter not ready, src/work/worker.ts); stop() takes no new pass and waits for the one in flight,
// which may ask stopping() to end early. wake() (work arrived: a notification from this replica or another)
// cuts the pause short, or, during a pass, makes the next one follow at once; but a woken pass never starts
// sooner than `wakeGapMs` after the last one ended, since at webhook rate every commit wakes the loop and a
// pass that finds nothing due still searches (measured: a wake per commit tripled serve's CPU per request).
// Passes themselves run on the injected clock; only the pause between them is real time.
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';

export interface PollLoop {
  /** Runs a pass now, then one `pauseMs` after each pass ends. */
  start(): void;
  /** Takes no new pass and waits for the one in flight. */
  stop(): Promise<void>;
  /** True once stop() was called (until the next start): a pass in flight ends early. */
  stopping(): boolean;
  /** Work arrived: the next pass starts now (during a pause), or as soon as the one in flight ends. Nothing before start(). */
  wake(): void;
  /** Passes that failed in a row, up to the last one ended (0 once one ends well). */
  failuresInARow(): number;
}

/** The shortest real-time gap between a pass and the next one a wake() starts, unless pauseMs is shorter. */
const WAKE_GAP_MS = 50;

export function createPollLoop(opts: { pass: () => Promise<unknown>; pauseMs: number; logger: Logger; failureMessage: string; wakeGapMs?: number }): PollLoop {
  const wakeGapMs = Math.min(opts.wakeGapMs ?? WAKE_GAP_MS, opts.pauseMs);
  let stopping = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  /** A wake() came during the pass in flight: no pause after it. */
  let woken = false;
  let running: Promise<unknown> = Promise.resolve();
  /** When the last pass ended (performance.now()); the pause is real time, so this is too. */
  let lastEnd = -Infinity;
  let failures = 0;
  const sinceLastEnd = () => performance.now() - lastEnd;
  function next(): void {
    timer = undefined;
    if (stopping) return;
    woken = false;
    running = opts
      .pass()
      .then(
        () => (failures = 0),
        (err: unknown) => {
          failures++;
          opts.logger.error({ err: describeError(err), failuresInARow: failures }, opts.failureMessage);
        },
      )
      .finally(() => {
        lastEnd = performance.now();
        if (!stopping) timer = setTimeout(next, woken ? wakeGapMs : opts.pauseMs);
      });
  }
  return {
    start() {
      stopping = false;
      started = true;
      next();
    },
    async stop() {
      stopping = true;
      started = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
    stopping: () => stopping,
    failuresInARow: () => failures,
    wake() {
      if (!started || stopping) return;
      if (timer === undefined) {
        woken = true;
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(next, Math.max(0, wakeGapMs - sinceLastEnd()));
    },
  };
}
