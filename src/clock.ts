// The one place that reads the wall clock. Everything that needs the time takes a Clock, so tests can
// move time (a 44-hour retry ladder, a night of quiet hours) in milliseconds.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that never moves by itself: for unit tests. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

export function createManualClock(startMs = Date.parse('2026-01-15T10:00:00.000Z')): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    set: (ms) => {
      current = ms;
    },
    advance: (ms) => {
      current += ms;
    },
  };
}

/** Real time plus an offset that only grows: the simulator's clock ("real time by default; tests move it forward"). */
export interface OffsetClock extends Clock {
  advance(ms: number): void;
  offsetMs(): number;
  /**
   * Stops the clock at its current reading until release(); advance() still moves it. While the simulator
   * fires what falls due on a jump forward, each thing then happens at exactly its own time, however
   * long the firing takes in real time.
   */
  hold(): void;
  release(): void;
}

export function createOffsetClock(base: Clock = systemClock, initialOffsetMs = 0): OffsetClock {
  let offset = initialOffsetMs;
  let held: number | undefined;
  return {
    now: () => held ?? base.now() + offset,
    advance: (ms) => {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
      offset += ms;
      if (held !== undefined) held += ms;
    },
    offsetMs: () => offset,
    hold: () => {
      held ??= base.now() + offset;
    },
    // Real time that passed while held shows again at once: the reading only ever moves forward.
    release: () => {
      held = undefined;
    },
  };
}

export const toIso = (ms: number): string => new Date(ms).toISOString();

/** Resolves after `ms` of real time. Used by pollers; the decisions they make read the injected clock. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
