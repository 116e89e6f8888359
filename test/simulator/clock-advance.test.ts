// Signing under a moving clock: however often the simulator's clock is advanced (overlapping calls, the
// dispatch loop running, retries in flight, a subscription pausing and resuming, a real-time clock driven over
// HTTP), every attempt carries the simulator time at which its receiver gets to it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, createOffsetClock } from '../../src/clock.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../../src/contract/api.ts';
import { silentLogger } from '../../src/logger.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { waitFor } from '../support/wait.ts';

interface Handled {
  eventId: string;
  attempt: number;
  signedAtMs: number;
  simNowMs: number;
}

/**
 * A receiver that takes one request at a time, as a busy single worker does: each waits its turn, then the
 * receiver reads the simulator's clock (where a real one checks the timestamp) and answers. It fails the
 * first `failFirst` attempts of every event, and can be told to stop taking requests after some number.
 */
async function oneAtATimeReceiver(sim: Simulator, failFirst: number) {
  const handled: Handled[] = [];
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let busy = false;
  let takeUpTo = Infinity;
  const takeNext = () => {
    if (busy || handled.length >= takeUpTo) return;
    const next = waiting.shift();
    if (!next) return;
    busy = true;
    const [req, res] = next;
    setTimeout(() => {
      const attempt = Number(req.headers['x-service-delivery-attempt']);
      handled.push({
        eventId: String(req.headers['x-service-event-id']),
        attempt,
        signedAtMs: Number(req.headers['x-service-timestamp']) * 1000,
        simNowMs: sim.clock.now(),
      });
      res.writeHead(attempt <= failFirst ? 500 : 200).end();
      busy = false;
      takeNext();
    }, 1);
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      waiting.push([req, res]);
      takeNext();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    handled,
    stopAfter(n: number) {
      takeUpTo = n;
    },
    takeAll() {
      takeUpTo = Infinity;
      takeNext();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function setUp(failFirst: number, dispatchIntervalMs?: number) {
  const clock = createOffsetClock(createManualClock(Date.parse('2026-01-15T12:00:00.000Z')));
  const sim = createSimulator({ clock, logger: silentLogger(), ...(dispatchIntervalMs ? { dispatchIntervalMs } : {}) });
  const receiver = await oneAtATimeReceiver(sim, failFirst);
  cleanup = async () => {
    await sim.stop();
    await receiver.close();
  };
  const http = () => request(sim.app.callback());
  const { clinicId } = (await http().post('/_sim/clinics').send({})).body as { clinicId: string };
  const sub = (await http().post('/_sim/subscriptions').send({ clinicId, url: receiver.url })).body as { id: string };
  return { sim, receiver, http, clinicId, subscriptionId: sub.id };
}

// The timestamp has whole seconds: up to a second of rounding, nothing of a race.
const expectSignedWhenHandled = (handled: Handled[]) => {
  for (const h of handled) expect(h.simNowMs - h.signedAtMs, `attempt ${h.attempt} of ${h.eventId}`).toBeLessThan(1_000);
};

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('the simulator clock under advances', () => {
  it('signs every attempt, retries included, with the time at which it is received while advances overlap', async () => {
    const { sim, receiver, http, clinicId, subscriptionId } = await setUp(4, 1);
    sim.start();
    // A hundred advances arrive, each without waiting for the one before, while the dispatch loop runs and events
    // are made whose first attempts all fail (so many in a row that the subscription pauses).
    const calls: Promise<unknown>[] = [];
    const burst = (async () => {
      for (let i = 0; i < 100; i++) {
        calls.push(
          http()
            .post('/_sim/clock/advance')
            .send({ seconds: [7, 29, 121, 3600][i % 4] })
            .expect(200),
        );
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    })();
    await Promise.all([
      ...Array.from({ length: 60 }, () => http().post('/_sim/patients').send({ clinicId }).expect(201)),
      ...Array.from({ length: 20 }, async () => {
        const apt = await http().post('/_sim/appointments').send({ clinicId }).expect(201);
        await http().post(`/_sim/appointments/${apt.body.serviceId}/cancel`).expect(200);
      }),
    ]);
    await burst;
    await Promise.all(calls);

    // The rest of the ladder, resuming whenever failures in a row paused the subscription again, until all 120
    // events are through: 60 patients, 20 appointments with a patient made for each, and their cancellations
    // (each waits for its appointment's creation, then fails its own first attempts).
    const delivered = () => new Set(receiver.handled.filter((h) => h.attempt === 5).map((h) => h.eventId)).size;
    await waitFor(
      async () => {
        await http().post(`/_sim/subscriptions/${subscriptionId}/resume`).expect(200);
        await Promise.all([http().post('/_sim/clock/advance').send({ seconds: 3600 }), http().post('/_sim/clock/advance').send({ seconds: 600 })]);
        return delivered() === 120 || undefined;
      },
      20_000,
      0,
    );
    expect(new Set(receiver.handled.map((h) => h.eventId)).size).toBe(120);
    expect(((await http().get('/_sim/alerts')).body as { kind: string }[]).some((a) => a.kind === 'subscription_paused')).toBe(true);
    expectSignedWhenHandled(receiver.handled);
  }, 60_000);

  it('keeps the whole ladder on time while advances overlap attempts held at the receiver', async () => {
    const { sim, receiver, http, clinicId, subscriptionId } = await setUp(4);
    for (let i = 0; i < 45; i++) await http().post('/_sim/patients').send({ clinicId }).expect(201);
    const processed = async () => ((await http().get('/_sim/deliveries')).body as unknown[]).length;
    // On each rung an advance makes the 45 attempts due there, all in flight at once (fewer than the 50 failures
    // that would pause the subscription); while the pass's last attempts still wait at the receiver, another
    // advance comes. A resume after each rung clears the count of failures in a row.
    for (const rung of [0, 30, 120, 600, 3600]) {
      const seen = receiver.handled.length;
      receiver.stopAfter(seen + 40);
      const firing = sim.advance(rung * 1000);
      await waitFor(async () => (await processed()) === seen + 40 || undefined);
      const overlapping = sim.advance(15_000);
      receiver.takeAll();
      await Promise.all([firing, overlapping]);
      await http().post(`/_sim/subscriptions/${subscriptionId}/resume`).expect(200);
    }
    expect(receiver.handled).toHaveLength(225);
    expect(new Set(receiver.handled.filter((h) => h.attempt === 5).map((h) => h.eventId)).size).toBe(45);
    expectSignedWhenHandled(receiver.handled);
    // Each attempt went on its own rung of the ladder, the overlapping advances notwithstanding.
    const t0 = Date.parse('2026-01-15T12:00:00.000Z');
    expect(new Set(receiver.handled.map((h) => `attempt ${h.attempt} at +${(h.signedAtMs - t0) / 1000} s`))).toEqual(
      new Set(['attempt 1 at +0 s', 'attempt 2 at +30 s', 'attempt 3 at +150 s', 'attempt 4 at +750 s', 'attempt 5 at +4350 s']),
    );
  });
});

describe('the simulator clock on real time, driven over HTTP', () => {
  it('signs every attempt with its clock at receipt while a failing receiver meets jumps of the clock', async () => {
    const running = await startSimulatorServer({ logger: silentLogger() });
    const sim = running.simulator;
    // Fails each event's first four attempts (500), then takes it (200); notes how far each timestamp is from the
    // simulator's clock when the request arrives, where a real receiver checks it against the ±300 s tolerance.
    const attempts = new Map<string, number>();
    const skews: { attempt: number; skewSeconds: number }[] = [];
    const receiver = createServer((req, res) => {
      const skewSeconds = Math.floor(sim.clock.now() / 1000) - Number(req.headers['x-service-timestamp']);
      const eventId = String(req.headers['x-service-event-id']);
      const attempt = (attempts.get(eventId) ?? 0) + 1;
      attempts.set(eventId, attempt);
      skews.push({ attempt: Number(req.headers['x-service-delivery-attempt']), skewSeconds });
      req.resume();
      req.on('end', () => res.writeHead(attempt <= 4 ? 500 : 200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    cleanup = async () => {
      await running.close();
      await new Promise<void>((resolve) => {
        receiver.close(() => resolve());
        receiver.closeAllConnections();
      });
    };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.json()) as Record<string, string>;
    };
    const { clinicId } = await post('/_sim/clinics', {});
    const sub = await post('/_sim/subscriptions', { clinicId, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });

    // Events are made while jumps of the clock arrive and the dispatch loop (real time) runs; each jump lands on
    // retries that are due on the way, and resumes let the failing subscription go on after it pauses.
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 120; i++) {
      calls.push(post('/_sim/patients', { clinicId }));
      if (i % 3 === 0) calls.push(post('/_sim/clock/advance', { seconds: [30, 120, 600, 3600][(i / 3) % 4]! }));
      if (i % 10 === 0) calls.push(post(`/_sim/subscriptions/${sub.id}/resume`, {}));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(calls);
    const done = () => [...attempts.values()].filter((n) => n >= 5).length;
    await waitFor(
      async () => {
        await Promise.all([
          post('/_sim/clock/advance', { seconds: 3600 }),
          post(`/_sim/subscriptions/${sub.id}/resume`, {}),
          post('/_sim/clock/advance', { seconds: 600 }),
        ]);
        return done() === 120 || undefined;
      },
      20_000,
      0,
    );
    expect(skews.filter((s) => s.attempt === 5)).toHaveLength(120);
    for (const s of skews) expect(Math.abs(s.skewSeconds), `attempt ${s.attempt}`).toBeLessThanOrEqual(DEFAULT_TOLERANCE_SECONDS);
  }, 60_000);
});
