// The background loop of a work queue (the processor, the pusher): runs one pass, pauses, runs the next.
// A failed pass is logged and the loop goes on; stop() takes no new pass and waits for the one in flight,
// which may ask stopping() to end early. Passes themselves run on the injected clock; only the pause
// between them is real time.
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';

export interface PollLoop {
  /** Runs a pass now, then one `pauseMs` after each pass ends. */
  start(): void;
  /** Takes no new pass and waits for the one in flight. */
  stop(): Promise<void>;
  /** True once stop() was called (until the next start): a pass in flight ends early. */
  stopping(): boolean;
}

export function createPollLoop(opts: { pass: () => Promise<unknown>; pauseMs: number; logger: Logger; failureMessage: string }): PollLoop {
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  function next(): void {
    if (stopping) return;
    running = opts
      .pass()
      .catch((err: unknown) => opts.logger.error({ err: describeError(err) }, opts.failureMessage))
      .finally(() => {
        if (!stopping) timer = setTimeout(next, opts.pauseMs);
      });
  }
  return {
    start() {
      stopping = false;
      next();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      await running;
    },
    stopping: () => stopping,
  };
}
