// Intake first: the processor's events in flight against the event loop's delay while webhooks queue, and the
// whole limit back once they stop. The delays, the time and the webhooks in flight are the test's; tick() closes a
// window.
import { describe, expect, it } from 'vitest';
import { createIntakePriority, type IntakePriorityOptions, timerLoopDelay } from '../../src/work/intake-priority.ts';

function priority(overrides: Partial<IntakePriorityOptions> = {}) {
  let t = 0;
  const late: number[] = [];
  const p = createIntakePriority({
    max: 32,
    targetDelayMs: 5,
    quietMs: 500,
    delays: { takeMaxMs: () => late.shift() ?? 0 },
    now: () => t,
    ...overrides,
  });
  return {
    p,
    /** The next windows' delays (ms). */
    late: (...ms: number[]) => late.push(...ms),
    advance: (ms: number) => (t += ms),
    /** `n` webhooks arriving and left in flight (queued); returns what answers them. */
    queued(n: number) {
      return Array.from({ length: n }, () => p.webhook());
    },
  };
}

describe('intake priority', () => {
  it('allows the whole limit while no webhook arrives, however late the loop runs', () => {
    const { p, late } = priority();
    late(50, 80);
    p.tick();
    p.tick();
    expect(p.limit()).toBe(32);
    expect(p.lowered()).toBe(0);
  });

  it('halves the limit for each late window while webhooks queue, down to the minimum and no further', () => {
    const { p, late, queued, advance } = priority({ min: 2 });
    queued(4);
    advance(10);
    late(6, 6, 6, 6, 6, 6);
    const seen = [];
    for (let i = 0; i < 6; i++) {
      p.tick();
      seen.push(p.limit());
    }
    expect(seen).toEqual([16, 8, 4, 2, 2, 2]);
    expect(p.lowered()).toBe(6);
  });

  it('gives back one event per window on time while webhooks go on queueing', () => {
    const { p, late, queued, advance } = priority();
    queued(4);
    advance(10);
    late(20, 20, 20, 1, 1, 1);
    for (let i = 0; i < 6; i++) p.tick();
    expect(p.limit()).toBe(4 + 3);
  });

  it('takes the loop back at once when no webhook has come for quietMs', () => {
    const { p, late, advance, queued } = priority();
    const answers = queued(4);
    advance(10);
    late(20, 20, 20);
    p.tick();
    advance(10);
    p.tick();
    expect(p.limit()).toBe(8);
    advance(479);
    p.tick();
    expect(p.limit()).toBe(4);
    for (const answer of answers) answer();
    advance(1);
    p.tick();
    expect(p.limit()).toBe(32);
  });

  it('never allows more than the most, nor a minimum above it', () => {
    const { p, late, queued } = priority({ max: 3, min: 8 });
    queued(4);
    late(1, 1, 30);
    p.tick();
    p.tick();
    expect(p.limit()).toBe(3);
    p.tick();
    expect(p.limit()).toBe(3);
  });
});

describe('intake priority, webhooks one at a time', () => {
  it('keeps the whole limit while webhooks come one at a time, however late the loop runs (their own commits make it late)', () => {
    const { p, late, advance } = priority();
    for (let window = 0; window < 5; window++) {
      // Five webhooks a window, each answered 2 ms after it came: under one in flight on average.
      for (let i = 0; i < 5; i++) {
        const answer = p.webhook();
        advance(2);
        answer();
        advance(8);
      }
      late(12);
      p.tick();
    }
    expect(p.limit()).toBe(32);
    expect(p.lowered()).toBe(0);
  });

  it('gives way once webhooks queue on a late loop, and counts only the time they were in flight', () => {
    const { p, late, advance } = priority();
    const answers = [p.webhook(), p.webhook(), p.webhook()];
    advance(40);
    for (const answer of answers) answer();
    advance(10);
    // Three in flight for 40 ms of the 50: 2.4 on average.
    late(12);
    p.tick();
    expect(p.limit()).toBe(16);
    // The next window: none in flight, though the loop is still late.
    advance(50);
    late(12);
    p.tick();
    expect(p.limit()).toBe(17);
  });
});

describe("the event loop's delay, as a timer sees it", () => {
  it('reads a loop held for 60 ms as about 60 ms late, and the next window, once on time, as far less', async () => {
    const delays = timerLoopDelay(2);
    try {
      await new Promise((r) => setTimeout(r, 20));
      delays.takeMaxMs();
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // Holds the event loop, as a long turn of work would.
      }
      await new Promise((r) => setTimeout(r, 10));
      expect(delays.takeMaxMs()).toBeGreaterThan(40);
      await new Promise((r) => setTimeout(r, 30));
      expect(delays.takeMaxMs()).toBeLessThan(40);
    } finally {
      delays.stop();
    }
  });
});
