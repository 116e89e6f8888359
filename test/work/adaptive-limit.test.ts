// The adaptive limit of calls in flight: never more than it allows, halved once per round when the dependency
// pushes back or its latency climbs, given back a call per round of answers, and first come first served.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createAdaptiveLimit } from '../../src/work/adaptive-limit.ts';

const pushBack = new Error('429');
/** A push-back that asked for no wait (0), or no push-back. */
const isPushBack = (err: unknown) => (err === pushBack ? 0 : false);

/** A call that resolves (or rejects) when told to. */
function pendingCall() {
  let settle!: (fail?: boolean) => void;
  const promise = new Promise<string>((resolve, reject) => {
    settle = (fail) => (fail ? reject(pushBack) : resolve('ok'));
  });
  return { promise, settle };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('adaptive limit', () => {
  it('starts at the most allowed and never has more calls in flight than its limit', async () => {
    const limit = createAdaptiveLimit({ max: 4, clock: createManualClock() });
    const calls = Array.from({ length: 10 }, () => pendingCall());
    let most = 0;
    const runs = calls.map((c) =>
      limit.run(() => {
        most = Math.max(most, limit.inFlight());
        return c.promise;
      }),
    );
    await flush();
    expect(limit.inFlight()).toBe(4);
    expect(limit.waiting()).toBe(6);
    for (const c of calls) {
      c.settle();
      await flush();
    }
    await Promise.all(runs);
    expect(most).toBe(4);
    expect(limit.inFlight()).toBe(0);
  });

  it('halves once for a round of push-backs, not once per call of the round', async () => {
    const changes: number[] = [];
    const limit = createAdaptiveLimit({ max: 16, clock: createManualClock(), onChange: (n) => changes.push(n) });
    const round = Array.from({ length: 16 }, () => pendingCall());
    const runs = round.map((c) => limit.run(() => c.promise, isPushBack).catch(() => 'pushed back'));
    await flush();
    for (const c of round) c.settle(true);
    expect(await Promise.all(runs)).toEqual(Array(16).fill('pushed back'));
    expect(limit.limit()).toBe(8);
    expect(changes).toEqual([8]);
  });

  it('gives back one call per round of answers until it is at the most allowed again', async () => {
    const limit = createAdaptiveLimit({ max: 8, clock: createManualClock() });
    await limit.run(() => Promise.reject(pushBack), isPushBack).catch(() => undefined);
    expect(limit.limit()).toBe(4);
    const answers = async (n: number) => {
      for (let i = 0; i < n; i++) await limit.run(async () => 'ok');
    };
    await answers(4);
    expect(limit.limit()).toBe(5);
    await answers(5 + 6 + 7);
    expect(limit.limit()).toBe(8);
    await answers(50);
    expect(limit.limit()).toBe(8);
  });

  it('lowers the limit when latency climbs well above the usual, not for a failure that is no push-back', async () => {
    const clock = createManualClock();
    const limit = createAdaptiveLimit({ max: 32, clock });
    const answerIn = (ms: number) =>
      limit.run(async () => {
        clock.advance(ms);
      });
    for (let i = 0; i < 50; i++) await answerIn(50);
    await limit.run(() => Promise.reject(new Error('404')), isPushBack).catch(() => undefined);
    expect(limit.limit()).toBe(32);
    for (let i = 0; i < 20 && limit.limit() === 32; i++) await answerIn(600);
    expect(limit.limit()).toBe(16);
  });

  it('lowers the limit once for the push-backs of one Retry-After, then again for those after it', async () => {
    const clock = createManualClock();
    const limit = createAdaptiveLimit({ max: 32, clock });
    const pushedBackFor = (ms: number) => (err: unknown) => (err === pushBack ? ms : false);
    const refused = () => limit.run(() => Promise.reject(pushBack), pushedBackFor(1_000)).catch(() => undefined);
    await refused();
    expect(limit.limit()).toBe(16);
    // A round of calls later, but within the second the EMR asked for: the same episode.
    for (let i = 0; i < 16; i++) await limit.run(async () => 'ok');
    await refused();
    expect(limit.limit()).toBe(17);
    clock.advance(1_000);
    for (let i = 0; i < 17; i++) await limit.run(async () => 'ok');
    await refused();
    expect(limit.limit()).toBe(9);
  });

  it('lets waiting calls in first come, first served', async () => {
    const limit = createAdaptiveLimit({ max: 1, clock: createManualClock() });
    const first = pendingCall();
    const order: number[] = [];
    const runs = [limit.run(() => first.promise), ...[1, 2, 3].map((n) => limit.run(async () => void order.push(n)))];
    await flush();
    first.settle();
    await Promise.all(runs);
    expect(order).toEqual([1, 2, 3]);
  });
});
