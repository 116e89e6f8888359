// The one shape of background work, over the poll loop's timing (test/work/poll-loop.test.ts): recovery before
// the first pass of each start, rounds that pass again at once while work is left, a wake source that cuts the
// pause, runOnce() joining the round in flight, and stop() waiting for a round whoever started it.
import { describe, expect, it } from 'vitest';
import { createWorker, FAILING_AFTER, type PassResult, type WorkerSpec } from '../../src/work/worker.ts';
import { captureLogger } from '../support/log-capture.ts';
import { waitFor } from '../support/wait.ts';

const LONG_PAUSE_MS = 600_000;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pass that can be held open: `release()` lets the pass in flight end. */
function gate() {
  let release: (() => void) | undefined;
  return {
    wait: () => new Promise<void>((r) => (release = r)),
    held: () => release !== undefined,
    release() {
      const r = release;
      release = undefined;
      r?.();
    },
  };
}

function worker(spec: Partial<WorkerSpec> & Pick<WorkerSpec, 'pass'>) {
  const { logger, lines } = captureLogger();
  const w = createWorker({ name: 'test', pauseMs: LONG_PAUSE_MS, logger, ...spec });
  return { worker: w, failures: () => lines().filter((l) => l.msg === 'test pass failed') };
}

describe('the worker', () => {
  it('takes over what a stopped process held before its first pass, at each start', async () => {
    const calls: string[] = [];
    const { worker: w } = worker({
      recover: async () => {
        calls.push('recover');
        return 0;
      },
      pass: async () => {
        calls.push('pass');
        return { done: 0, more: false };
      },
    });
    w.start();
    await waitFor(() => calls.length === 2 || undefined);
    await w.stop();
    w.start();
    await waitFor(() => calls.length === 4 || undefined);
    await w.stop();
    expect(calls).toEqual(['recover', 'pass', 'recover', 'pass']);
  });

  it('logs a failed recovery or pass under its name and goes on: no pass before a recovery succeeds', async () => {
    const calls: string[] = [];
    let recoveries = 0;
    let passes = 0;
    const { worker: w, failures } = worker({
      pauseMs: 1,
      recover: async () => {
        calls.push('recover');
        if (++recoveries === 1) throw new Error('store down');
        return 0;
      },
      pass: async () => {
        calls.push('pass');
        if (++passes === 1) throw new Error('boom');
        return { done: 0, more: false };
      },
    });
    w.start();
    await waitFor(() => passes >= 3 || undefined);
    await w.stop();
    expect(calls.slice(0, 4)).toEqual(['recover', 'recover', 'pass', 'pass']);
    expect(failures()).toHaveLength(2);
  });

  it('passes again at once while a pass leaves more, then pauses; runOnce() returns what the round did', async () => {
    let passes = 0;
    const pass = async (): Promise<PassResult> => ({ done: 2, more: ++passes % 3 !== 0 });
    const { worker: w } = worker({ pass });
    expect(await w.runOnce()).toBe(6);
    w.start();
    await waitFor(() => passes === 6 || undefined);
    await tick(50);
    await w.stop();
    expect(passes).toBe(6);
  });

  it('cuts the pause short when its wake source tells of work, and stops listening on stop()', async () => {
    let listener: (() => void) | undefined;
    let passes = 0;
    const { worker: w } = worker({
      pass: async () => {
        passes++;
        return { done: 0, more: false };
      },
      wakeOn: (wake) => {
        listener = wake;
        return () => {
          listener = undefined;
        };
      },
    });
    w.start();
    await waitFor(() => passes === 1 || undefined);
    listener!();
    await waitFor(() => passes === 2 || undefined);
    await w.stop();
    expect(listener).toBeUndefined();
  });

  it('joins a runOnce() called during a round, which goes round once more', async () => {
    const hold = gate();
    let passes = 0;
    const { worker: w } = worker({
      pass: async () => {
        if (++passes === 1) await hold.wait();
        return { done: 1, more: false };
      },
    });
    const first = w.runOnce();
    await waitFor(() => hold.held() || undefined);
    const second = w.runOnce();
    hold.release();
    expect(await Promise.all([first, second])).toEqual([2, 2]);
    expect(passes).toBe(2);
  });

  it('waits on stop() for the round in flight, even one runOnce() started, which sees stopping() and ends', async () => {
    const hold = gate();
    let passes = 0;
    let sawStopping = false;
    const { worker: w } = worker({
      pass: async () => {
        passes++;
        await hold.wait();
        sawStopping = w.stopping();
        return { done: 1, more: true };
      },
    });
    const round = w.runOnce();
    await waitFor(() => hold.held() || undefined);
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    await tick(20);
    expect(stopped).toBe(false);
    hold.release();
    await stopping;
    expect(await round).toBe(1);
    expect(sawStopping).toBe(true);
    expect(passes).toBe(1);
  });
});

describe('a worker whose passes fail', () => {
  it('is failing once FAILING_AFTER passes in a row failed, and no longer once one ends well', async () => {
    let broken = true;
    let passes = 0;
    const { worker: w } = worker({
      pauseMs: 5,
      pass: async () => {
        passes++;
        if (broken) throw new Error('no such table: processing');
        return { done: 0, more: false };
      },
    });
    w.start();
    try {
      await waitFor(() => passes >= FAILING_AFTER - 1 || undefined);
      const before = passes;
      await waitFor(() => w.failing() || undefined);
      expect(passes).toBeGreaterThanOrEqual(Math.max(before, FAILING_AFTER));
      broken = false;
      await waitFor(() => !w.failing() || undefined);
    } finally {
      await w.stop();
    }
  });
});
