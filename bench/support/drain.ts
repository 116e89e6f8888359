// Drains a processor's backlog the way `serve` runs it: each processor's own loop (start(), stop()), passes back
// to back while intake leaves rows behind. The backlog is looked at on a timer, not after every pass, so the
// count (a scan of the open rows, which a real loop never makes) is not charged to the processor per pass.
import type { Processor } from '../../src/processor/index.ts';

/** A drain that leaves the backlog unchanged this long is broken (a refused sign-in waits forever), not slow. */
export const STALL_MS = 30_000;
const LOOK_EVERY_MS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `processors`, waits until `depth()` is 0, stops them; returns the seconds from start to the first look
 * that found nothing left. `stalled()` says why, when the backlog stops moving for STALL_MS.
 */
export async function drainWithLoops(processors: Processor[], depth: () => Promise<number>, stalled: () => Promise<string>): Promise<number> {
  const t0 = performance.now();
  for (const p of processors) p.start();
  try {
    let last = await depth();
    let movedAt = performance.now();
    while (last > 0) {
      await sleep(LOOK_EVERY_MS);
      const now = await depth();
      if (now !== last) movedAt = performance.now();
      else if (performance.now() - movedAt > STALL_MS) throw new Error(`the backlog stayed at ${now} for ${STALL_MS / 1000} s: ${await stalled()}`);
      last = now;
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await Promise.all(processors.map((p) => p.stop()));
  }
}
