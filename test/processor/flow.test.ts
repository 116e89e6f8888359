// The processor's flow of claimed events: slots refilled the moment an event ends (no barrier between
// batches), an event whose lock key is busy waiting outside the slots, outcomes committed in groups with the
// next claim, arrivals taken in while it runs, and what it must not start any more handed back untried.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { runFlow, type FlowDeps } from '../../src/processor/flow.ts';
import type { ClaimedEvent, EventOutcome, NextClaim } from '../../src/storage/processing.ts';

const claimed = (inboxId: number, entityKey = `appointment:apt_${inboxId}`): ClaimedEvent => ({
  inboxId,
  eventId: `evt_${inboxId}`,
  entityKey,
  attempts: 1,
  traceContext: null,
});

/** A queue of `events` handed out in order; every commit is kept. */
function fakeQueue(events: ClaimedEvent[]) {
  const waiting = [...events];
  const commits: { outcomes: EventOutcome[]; next?: NextClaim }[] = [];
  return {
    commits,
    arrive: (...more: ClaimedEvent[]) => waiting.push(...more),
    queue: {
      claim: async (limit: number) => waiting.splice(0, limit),
      commit: async (outcomes: EventOutcome[], next?: NextClaim) => {
        commits.push({ outcomes: [...outcomes], ...(next ? { next } : {}) });
        return next ? waiting.splice(0, next.limit) : [];
      },
    } satisfies FlowDeps['queue'],
  };
}

/** Events that end when released (by inbox id), recording when each started and ended. */
function gatedHandling() {
  const gates = new Map<number, () => void>();
  const log: string[] = [];
  let inFlight = 0;
  let most = 0;
  const handle: FlowDeps['handle'] = async (c, batch) => {
    inFlight++;
    most = Math.max(most, inFlight);
    log.push(`start ${c.inboxId}`);
    await new Promise<void>((r) => gates.set(c.inboxId, r));
    log.push(`end ${c.inboxId}`);
    inFlight--;
    batch.add({ kind: 'applied', inboxId: c.inboxId, versions: [], claims: [] });
    return true;
  };
  return {
    handle,
    log,
    most: () => most,
    end: async (...ids: number[]) => {
      for (const id of ids) gates.get(id)?.();
      await new Promise((r) => setImmediate(r));
    },
    started: (id: number) => log.includes(`start ${id}`),
  };
}

function flowDeps(overrides: Partial<FlowDeps> & Pick<FlowDeps, 'queue' | 'handle'>): FlowDeps {
  return {
    release: (c, batch) => batch.add({ kind: 'release', inboxId: c.inboxId }),
    keysOf: (c) => [c.entityKey],
    intake: async () => false,
    going: () => true,
    concurrency: 2,
    leaseMs: 60_000,
    clock: createManualClock(),
    ...overrides,
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('processor flow', () => {
  it('starts the next event the moment one ends, while the slow one of its claim still runs', async () => {
    const q = fakeQueue(Array.from({ length: 8 }, (_, i) => claimed(i + 1)));
    const h = gatedHandling();
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle }));
    await settle();
    // Event 1 is slow; the other slot goes through 2…8, claimed in later rounds, without waiting for it.
    for (let id = 2; id <= 8; id++) {
      expect(h.started(id)).toBe(true);
      await h.end(id);
    }
    expect(h.log.includes('end 1')).toBe(false);
    await h.end(1);
    expect(await done).toBe(8);
    expect(h.most()).toBe(2);
  });

  it('keeps an event whose patient is busy out of the slots until the event holding that patient ends', async () => {
    const q = fakeQueue([claimed(1), claimed(2), claimed(3), claimed(4)]);
    const h = gatedHandling();
    // Events 1 and 2 are appointments of one patient; 3 and 4 of others.
    const keysOf = (c: ClaimedEvent) => (c.inboxId <= 2 ? [c.entityKey, 'patient:pat_1'] : [c.entityKey]);
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, keysOf }));
    await settle();
    expect(h.started(1)).toBe(true);
    expect(h.started(2)).toBe(false);
    // The second slot is not spent waiting for the patient: 3, then 4, run in it meanwhile.
    expect(h.started(3)).toBe(true);
    await h.end(3);
    expect(h.started(4)).toBe(true);
    await h.end(4);
    expect(h.started(2)).toBe(false);
    await h.end(1);
    expect(h.started(2)).toBe(true);
    await h.end(2);
    expect(await done).toBe(4);
  });

  it('commits outcomes in groups with the next claim, not one commit per event', async () => {
    const q = fakeQueue(Array.from({ length: 64 }, (_, i) => claimed(i + 1)));
    const handle: FlowDeps['handle'] = async (c, batch) => {
      await settle();
      batch.add({ kind: 'applied', inboxId: c.inboxId, versions: [], claims: [] });
      return true;
    };
    expect(await runFlow(flowDeps({ queue: q.queue, handle, concurrency: 8 }))).toBe(64);
    const written = q.commits.flatMap((c) => c.outcomes.map((o) => o.inboxId));
    expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(q.commits.length).toBeLessThanOrEqual(64 / 4);
  });

  it('takes in what arrives while it runs and applies it in the same flow', async () => {
    const q = fakeQueue([claimed(1)]);
    const h = gatedHandling();
    let arrivals = 0;
    const intake = async () => {
      if (arrivals++ > 0) return false;
      q.arrive(claimed(2), claimed(3));
      return true;
    };
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, intake }));
    await settle();
    await h.end(1);
    await settle();
    expect(h.started(2) && h.started(3)).toBe(true);
    await h.end(2, 3);
    expect(await done).toBe(3);
  });

  it('hands back untried what it has not started once it must stop, and writes what finished', async () => {
    const q = fakeQueue(Array.from({ length: 6 }, (_, i) => claimed(i + 1)));
    const h = gatedHandling();
    let going = true;
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, going: () => going }));
    await settle();
    going = false;
    await h.end(1, 2);
    expect(await done).toBe(2);
    const kinds = new Map(q.commits.flatMap((c) => c.outcomes.map((o) => [o.inboxId, o.kind] as const)));
    expect([...kinds.entries()].sort(([a], [b]) => a - b)).toEqual([
      [1, 'applied'],
      [2, 'applied'],
      [3, 'release'],
      [4, 'release'],
      [5, 'release'],
      [6, 'release'],
    ]);
  });

  it('starts an event only while half its lease is left, handing the others back', async () => {
    const clock = createManualClock();
    const q = fakeQueue(Array.from({ length: 4 }, (_, i) => claimed(i + 1)));
    const h = gatedHandling();
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, clock, concurrency: 1 }));
    await settle();
    clock.advance(31_000);
    await h.end(1);
    // Claimed with 1 before the minute began: past half their lease, so not started; claimed again afresh.
    const released = q.commits.flatMap((c) => c.outcomes.filter((o) => o.kind === 'release').map((o) => o.inboxId));
    expect(released.length).toBeGreaterThan(0);
    for (let id = 2; id <= 4; id++) await h.end(id);
    await expect(done).resolves.toBeGreaterThanOrEqual(1);
  });
});

describe('processor flow against a slow EMR', () => {
  it('commits what finished within a tenth of a second, though its group is far from full', async () => {
    const q = fakeQueue(Array.from({ length: 6 }, (_, i) => claimed(i + 1)));
    const h = gatedHandling();
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, concurrency: 4 }));
    await settle();
    await h.end(1);
    const before = q.commits.flatMap((c) => c.outcomes).length;
    await new Promise((r) => setTimeout(r, 150));
    // Event 1's outcome is written while 2, 3 and 4 still run.
    expect(before).toBe(0);
    expect(q.commits.flatMap((c) => c.outcomes.map((o) => o.inboxId))).toEqual([1]);
    for (let id = 2; id <= 6; id++) await h.end(id);
    expect(await done).toBe(6);
  });
});

describe('processor flow while intake comes first', () => {
  it('keeps no more events in flight than the limit allows now, and claims less, then fills the slots once it rises', async () => {
    const q = fakeQueue(Array.from({ length: 40 }, (_, i) => claimed(i + 1)));
    const h = gatedHandling();
    let allowed = 1;
    const done = runFlow(flowDeps({ queue: q.queue, handle: h.handle, concurrency: 8, limit: () => allowed }));
    await settle();
    expect(h.log).toEqual(['start 1']);
    // Claimed ahead: 16 rounds of the one event allowed, not of the eight at most.
    expect(q.commits[0]!.next?.limit).toBe(16);
    await h.end(1);
    expect(h.log.filter((l) => l.startsWith('start'))).toEqual(['start 1', 'start 2']);
    allowed = 8;
    await h.end(2);
    expect(h.log.filter((l) => l.startsWith('start')).length).toBe(2 + 8);
    for (let id = 3; id <= 40; id++) await h.end(id);
    expect(await done).toBe(40);
    expect(h.most()).toBe(8);
  });
});
