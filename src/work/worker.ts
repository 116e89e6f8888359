// The one shape of background work (the processor with its mapping outbox, the pusher; a listener's worker
// next): recover, then rounds of passes in a loop. recover() takes over what a process that stopped was
// holding (./lease.ts, takeOverLeases); the loop's first round runs it first, and a recovery that fails
// fails that round and is tried again with the next. A round runs the pass, and again at once while a pass
// leaves more due (a full batch) or a runOnce() came meanwhile, yielding to I/O between two passes, so a
// backlog drains at the worker's pace rather than a batch a pause. Between rounds the loop pauses, unless
// woken: the wake source (the coordination: work stored by any replica) or wake() cuts the pause short.
// Rounds never overlap: runOnce() during one returns that one. stop() takes no new pass and waits for the
// one in flight, which reads stopping() to end early. The timing between rounds is the poll loop's.
import type { Logger } from '../logger.ts';
import { createPollLoop } from './poll-loop.ts';
import { yieldToIo } from './yield.ts';

/** What one pass did: how many items it did, and whether it left more due at once. */
export interface PassResult {
  done: number;
  more: boolean;
}

export interface WorkerSpec {
  /** Names the worker in its logs ('<name> pass failed'). */
  name: string;
  /** One pass over what is due now. */
  pass(): Promise<PassResult>;
  /** Takes over what a process that stopped was holding; returns how many. Without it there is nothing to take over. */
  recover?: () => Promise<number>;
  /** Subscribes to word that work arrived (calling `wake`); returns the unsubscribe. Without it the worker only polls. */
  wakeOn?: (wake: () => void) => () => void;
  /** The real-time pause between two rounds of the loop. */
  pauseMs: number;
  logger: Logger;
}

export interface Worker {
  /** Listens for wake-ups and runs the loop: recover() first, then a round, then one after each pause. */
  start(): void;
  /** Stops listening, takes no new pass and waits for the round in flight (the loop's or a runOnce()'s). */
  stop(): Promise<void>;
  /**
   * One round now: passes back to back until none leaves more due; returns what they did. Called while a
   * round runs, it returns that round, which goes round once more.
   */
  runOnce(): Promise<number>;
  /** Takes over, at once, what a process that stopped was holding; returns how many. */
  recover(): Promise<number>;
  /** Work arrived: the next round starts now (during a pause) or right after the one in flight. Nothing before start(). */
  wake(): void;
  /** True once stop() was called (until the next start): a pass in flight ends early. */
  stopping(): boolean;
  /**
   * True while its loop's last FAILING_AFTER passes all failed (a bug, the database gone): the adapter says it is
   * not ready (/readyz), rather than go on acknowledging webhooks that nothing applies.
   */
  failing(): boolean;
}

/** Passes failed in a row that make a worker failing: one is a moment's trouble, three in a row are not. */
export const FAILING_AFTER = 3;

export function createWorker(spec: WorkerSpec): Worker {
  const recover = spec.recover ?? (async () => 0);
  let current: Promise<number> | undefined;
  /** A runOnce() came, or a pass left more: the round goes on. */
  let again = false;
  let recovered = false;
  let unsubscribe: (() => void) | undefined;

  async function round(): Promise<number> {
    let done = 0;
    for (;;) {
      again = false;
      const result = await spec.pass();
      done += result.done;
      if (!(result.more || again) || loop.stopping()) return done;
      await yieldToIo();
    }
  }

  function runOnce(): Promise<number> {
    if (current) {
      again = true;
      return current;
    }
    const running = round().finally(() => {
      current = undefined;
    });
    current = running;
    return running;
  }

  /** The loop's round: the first after start() takes over what a stopped process held, before anything else. */
  async function loopRound(): Promise<void> {
    if (!recovered) {
      await recover();
      recovered = true;
    }
    await runOnce();
  }

  const loop = createPollLoop({ pass: loopRound, pauseMs: spec.pauseMs, logger: spec.logger, failureMessage: `${spec.name} pass failed` });

  return {
    start() {
      recovered = false;
      unsubscribe?.();
      unsubscribe = spec.wakeOn?.(() => loop.wake());
      loop.start();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = undefined;
      await loop.stop();
      // A round a caller started outside the loop; its caller hears how it ended.
      await current?.catch(() => undefined);
    },
    runOnce,
    recover,
    wake: () => loop.wake(),
    stopping: () => loop.stopping(),
    failing: () => loop.failuresInARow() >= FAILING_AFTER,
  };
}
