// The background loop of a work queue (the processor, the pusher): runs one pass, pauses, runs the next.
// A failed pass is logged and the loop goes on; stop() takes no new pass and waits for the one in flight,
// which may ask stopping() to end early. wake() (work arrived: a notification from this replica or another)
// cuts the pause short, or, during a pass, makes the next one follow at once. Passes themselves run on the
// injected clock; only the pause between them is real time.
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
}

export function createPollLoop(opts: { pass: () => Promise<unknown>; pauseMs: number; logger: Logger; failureMessage: string }): PollLoop {
  let stopping = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  /** A wake() came during the pass in flight: no pause after it. */
  let woken = false;
  let running: Promise<unknown> = Promise.resolve();
  function next(): void {
    timer = undefined;
    if (stopping) return;
    woken = false;
    running = opts
      .pass()
      .catch((err: unknown) => opts.logger.error({ err: describeError(err) }, opts.failureMessage))
      .finally(() => {
        if (!stopping) timer = setTimeout(next, woken ? 0 : opts.pauseMs);
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
    wake() {
      if (!started || stopping) return;
      if (timer === undefined) {
        woken = true;
        return;
      }
      clearTimeout(timer);
      next();
    },
  };
}
