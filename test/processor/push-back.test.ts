// An EMR that pushes back (429, or 503 with Retry-After) asks for time: the event goes back until then, its attempt
// not counted and its slot given to another, so a throttled EMR never makes a dead letter, however small the budget.
import { describe, expect, it } from 'vitest';
import { EmrError } from '../../src/emr/errors.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';

describe('the processor when the EMR pushes back', () => {
  it('puts the event back for the time asked, without counting the attempt, and applies it then', async () => {
    const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '1' });
    const id = f.store(appointmentEvent());
    f.emr.failWith = new EmrError('emr_unavailable', 'the EMR answered 429', 429, undefined, 5_000);
    await f.processor.runOnce();
    const waiting = f.state(id)!;
    expect(waiting.state).not.toBe('dead');
    expect(waiting.attempts).toBe(0);
    expect(waiting.next_attempt_at).toBeGreaterThanOrEqual(f.clock.now() + 5_000);
    expect(waiting.next_attempt_at).toBeLessThanOrEqual(f.clock.now() + 6_250);
    // Not before the time asked for...
    f.emr.failWith = undefined;
    await f.processor.runOnce();
    expect(f.state(id)?.state).not.toBe('applied');
    // ...and once it has passed, on its one attempt.
    f.clock.advance(6_250);
    await f.processor.runOnce();
    expect(f.state(id)).toMatchObject({ state: 'applied', attempts: 1 });
  });
});
