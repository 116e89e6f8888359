// The background loop of a work queue: one pass after another with a pause between, a failed pass logged
// and the loop going on, stop() waiting for the pass in flight (which sees stopping()), and wake() cutting
// the pause short.
import { describe, expect, it } from 'vitest';
import { createPollLoop } from '../../src/work/poll-loop.ts';
import { captureLogger } from '../support/log-capture.ts';
import { waitFor } from '../support/wait.ts';

describe('the poll loop', () => {
  it('runs pass after pass, logs a failed one and goes on', async () => {
    const { logger, lines } = captureLogger();
    let passes = 0;
    const loop = createPollLoop({
      pass: async () => {
        passes++;
        if (passes === 2) throw new Error('boom');
      },
      pauseMs: 1,
      logger,
      failureMessage: 'pass failed',
    });
    loop.start();
    await waitFor(() => passes >= 4 || undefined);
    await loop.stop();
    expect(lines().filter((l) => l.msg === 'pass failed')).toHaveLength(1);
  });

  it('waits on stop for the pass in flight, which sees stopping(), and runs no other', async () => {
    let release!: () => void;
    let sawStopping = false;
    let passes = 0;
    const { logger } = captureLogger();
    const loop = createPollLoop({
      pass: async () => {
        passes++;
        await new Promise<void>((r) => (release = r));
        sawStopping = loop.stopping();
      },
      pauseMs: 1,
      logger,
      failureMessage: 'pass failed',
    });
    loop.start();
    const stopped = loop.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    release();
    await stopped;
    expect(sawStopping).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    expect(passes).toBe(1);
  });
  it('starts the next pass at once when woken during the pause, or right after the pass in flight', async () => {
    let passes = 0;
    let release: (() => void) | undefined;
    const { logger } = captureLogger();
    const loop = createPollLoop({
      pass: async () => {
        passes++;
        if (passes === 2) await new Promise<void>((r) => (release = r));
      },
      pauseMs: 600_000,
      logger,
      failureMessage: 'pass failed',
    });
    loop.wake(); // before start: nothing
    loop.start();
    await waitFor(() => passes === 1 || undefined);
    loop.wake(); // during the (long) pause: the second pass now
    await waitFor(() => release !== undefined || undefined);
    loop.wake(); // during the second pass: the third right after it
    release!();
    await waitFor(() => passes === 3 || undefined);
    await loop.stop();
    expect(passes).toBe(3);
  });
});
