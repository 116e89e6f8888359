// The one retry rule of the work queues: incidents are waited out behind the gate without spending the
// budget, failures that can pass are retried with backoff (never sooner than Retry-After) until the
// attempts run out, and anything else is given up at once.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { EmrError } from '../../src/emr/errors.ts';
import { UnavailableError, ValidationError } from '../../src/errors.ts';
import { createIncidentGate } from '../../src/work/incident-gate.ts';
import { createRetryPolicy } from '../../src/work/retry-decision.ts';

const budget = { maxAttempts: 3, backoff: { baseMs: 1_000, maxMs: 8_000 } };

describe('the retry decision', () => {
  it('retries a failure that can pass at a backoff read from the clock, and gives up once the attempts run out', () => {
    const clock = createManualClock();
    const policy = createRetryPolicy({ clock, budget, random: () => 0.5 });
    const down = new UnavailableError('down');
    expect(policy.decide(down, 1)).toMatchObject({ kind: 'retry-at', at: clock.now() + 750, failure: { reason: 'unavailable: down' } });
    expect(policy.decide(down, 2)).toMatchObject({ kind: 'retry-at', at: clock.now() + 1_500 });
    expect(policy.decide(down, 3)).toMatchObject({ kind: 'give-up', exhausted: true });
  });

  it('waits at least as long as the Retry-After hint', () => {
    const clock = createManualClock();
    const policy = createRetryPolicy({ clock, budget, random: () => 0.5 });
    expect(policy.decide(new UnavailableError('slow down'), 1, 30_000)).toMatchObject({ kind: 'retry-at', at: clock.now() + 30_000 });
  });

  it('gives an EMR that pushed back the time it asked for, a little more at random, whatever the attempts made', () => {
    const clock = createManualClock();
    const policy = createRetryPolicy({ clock, budget, random: () => 0.5 });
    const throttled = new EmrError('emr_unavailable', 'the EMR answered 429', 429, undefined, 2_000);
    // 2 s and an eighth more (a quarter at most, here half of it); attempts past the budget still wait, not give up.
    expect(policy.decide(throttled, 3, 2_000)).toMatchObject({ kind: 'asked-to-wait', at: clock.now() + 2_250 });
    // Without a Retry-After: a second.
    expect(policy.decide(new EmrError('emr_unavailable', 'the EMR answered 429', 429), 1)).toMatchObject({ kind: 'asked-to-wait', at: clock.now() + 1_125 });
    // A 503 that does not say when is an outage, retried with backoff and counted.
    expect(policy.decide(new EmrError('emr_unavailable', 'the EMR answered 503', 503), 1)).toMatchObject({ kind: 'retry-at' });
  });

  it('gives up at once on a failure that cannot pass', () => {
    const policy = createRetryPolicy({ clock: createManualClock(), budget, random: () => 0.5 });
    expect(policy.decide(new ValidationError('bad'), 1)).toMatchObject({ kind: 'give-up', exhausted: false, failure: { code: 'invalid_request' } });
  });

  it('waits out an incident behind the gate without counting it, however many attempts were made', () => {
    const clock = createManualClock();
    const gate = createIncidentGate(clock, { baseMs: 1_000, maxMs: 60_000 }, () => 0.5);
    const policy = createRetryPolicy({ clock, budget, random: () => 0.5, gate });
    const refused = new EmrError('emr_unauthorized', 'sign-in refused');
    expect(refused.incident).toBe(true);
    expect(policy.decide(refused, 99)).toEqual({ kind: 'incident-wait', at: gate.reopensAt(), failure: expect.objectContaining({ code: 'emr_unauthorized' }) });
    expect(gate.closed()).toBe(true);
  });
});
