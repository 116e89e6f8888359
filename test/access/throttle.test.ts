// The sign-in throttle: a few failures free, then a wait that doubles with each further failure up to a cap;
// a success or a quiet hour starts an address afresh; addresses are counted apart, and only so many are kept.
import { describe, expect, it } from 'vitest';
import { createSignInThrottle } from '../../src/access/throttle.ts';
import { createManualClock } from '../../src/clock.ts';

const setup = (settings = {}) => {
  const clock = createManualClock();
  return { clock, throttle: createSignInThrottle({ clock, settings }) };
};

describe('the sign-in throttle', () => {
  it('lets the first five failures pass, then doubles the wait with each one', () => {
    const { throttle } = setup();
    const waits = Array.from({ length: 9 }, () => throttle.failed('10.0.0.1'));
    expect(waits).toEqual([0, 0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000]);
    expect(throttle.waitMs('10.0.0.1')).toBe(8_000);
  });

  it('counts the wait down with the clock and never waits longer than the cap', () => {
    const { throttle, clock } = setup({ maxDelayMs: 5_000 });
    for (let i = 0; i < 20; i++) throttle.failed('10.0.0.1');
    expect(throttle.waitMs('10.0.0.1')).toBe(5_000);
    clock.advance(4_000);
    expect(throttle.waitMs('10.0.0.1')).toBe(1_000);
    clock.advance(1_000);
    expect(throttle.waitMs('10.0.0.1')).toBe(0);
  });

  it('keeps addresses apart', () => {
    const { throttle } = setup({ freeFailures: 0 });
    throttle.failed('10.0.0.1');
    expect(throttle.waitMs('10.0.0.1')).toBe(1_000);
    expect(throttle.waitMs('10.0.0.2')).toBe(0);
  });

  it('starts an address afresh after a success, or after a quiet hour', () => {
    const { throttle, clock } = setup({ freeFailures: 1 });
    throttle.failed('a');
    throttle.failed('a');
    throttle.succeeded('a');
    expect(throttle.waitMs('a')).toBe(0);
    expect(throttle.failed('a')).toBe(0);
    throttle.failed('b');
    throttle.failed('b');
    clock.advance(60 * 60_000);
    expect(throttle.failed('b')).toBe(0);
  });

  it('remembers a bounded number of addresses, forgetting the least recent first', () => {
    const { throttle } = setup({ freeFailures: 0, maxAddresses: 2 });
    throttle.failed('a');
    throttle.failed('b');
    throttle.failed('c');
    expect(['a', 'b', 'c'].map((x) => throttle.waitMs(x))).toEqual([0, 1_000, 1_000]);
  });
});
