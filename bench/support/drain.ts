// Drains a processor's backlog the way `serve` runs it: each processor's own loop (start(), stop()), passes back
// to back while intake leaves rows behind. Progress is read from the processors' outcome counters (in memory)
// every few milliseconds; the backlog itself (a count over every open row, which a real loop never makes) is
// looked at only once they add up to the workload, so it is not charged to the processor as it drains.
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import type { Processor } from '../../src/processor/index.ts';

/** A drain whose outcome count stays put this long is broken (a refused sign-in waits forever), not slow. */
export const STALL_MS = 30_000;
const LOOK_EVERY_MS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Metrics for one processor of a drain: its outcome counter is how the drain sees progress. */
export const drainMetrics = (): Metrics => createMetrics();

/** Events that reached a final state so far, as a processor built with `metrics` counted them. */
async function finished(metrics: Metrics): Promise<number> {
  const counter = metrics.registry.getSingleMetric('emr_bridge_processor_events_total');
  if (!counter) throw new Error('the processor was not given these metrics');
  return (await counter.get()).values.reduce((n, v) => n + v.value, 0);
}

/**
 * Starts `processors` (each built with the matching `metrics`), waits until they have finished `events` events
 * and `depth()` is 0, stops them; returns the seconds from start to that look. `stalled()` says why, when no
 * event finishes for STALL_MS.
 */
export async function drainWithLoops(
  processors: Processor[],
  metrics: Metrics[],
  opts: { events: number; depth: () => Promise<number>; stalled: () => Promise<string> },
): Promise<number> {
  const done = async () => (await Promise.all(metrics.map(finished))).reduce((a, b) => a + b, 0);
  const t0 = performance.now();
  for (const p of processors) p.start();
  try {
    let last = -1;
    let movedAt = performance.now();
    for (;;) {
      await sleep(LOOK_EVERY_MS);
      const now = await done();
      if (now >= opts.events && (await opts.depth()) === 0) return (performance.now() - t0) / 1000;
      if (now !== last) movedAt = performance.now();
      else if (performance.now() - movedAt > STALL_MS)
        throw new Error(`${now} of ${opts.events} events finished, none for ${STALL_MS / 1000} s: ${await opts.stalled()}`);
      last = now;
    }
  } finally {
    await Promise.all(processors.map((p) => p.stop()));
  }
}
