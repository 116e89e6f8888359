// The simulator's offset clock: real time plus an offset that only grows, and a hold that stands it still.
import { describe, expect, it } from 'vitest';
import { createManualClock, createOffsetClock } from '../src/clock.ts';

describe('offset clock', () => {
  it('adds the offset to real time and refuses to move back', () => {
    const base = createManualClock(1_000);
    const clock = createOffsetClock(base, 500);
    expect(clock.now()).toBe(1_500);
    clock.advance(250);
    base.advance(10);
    expect(clock.now()).toBe(1_760);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it('stands still while held, moves only by advance, and shows real time again on release', () => {
    const base = createManualClock(1_000);
    const clock = createOffsetClock(base);
    clock.hold();
    base.advance(40);
    expect(clock.now()).toBe(1_000);
    clock.advance(3_600_000);
    expect(clock.now()).toBe(3_601_000);
    clock.release();
    expect(clock.now()).toBe(3_601_040);
    expect(clock.offsetMs()).toBe(3_600_000);
  });
});
